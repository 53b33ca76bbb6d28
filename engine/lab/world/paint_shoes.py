"""Shoes of a ``Figure`` (``engine.lab.world.figure``) by shoe type: a foreshortened profile in the front and back
views, the full profile in the side view. ``fig`` is the figure."""

from __future__ import annotations

from engine.lab.world.painter import Painter, Point


def shoes_front(fig, p: Painter) -> None:
    for s in (-1, 1):
        pts, ws, lift = fig.legs[s]
        shoe_front(fig, p, pts, ws, lift, s)



def shoe_front(fig, p: Painter, pts: list[Point], ws: list[float], lift: float, s: int) -> None:
    """Front/back views: the feet turn outwards, so each shoe shows a foreshortened profile."""
    ax, ay = pts[2]
    shoe_profile(fig, p, ax - s * 0.05 * fig.u, ay, ay + 0.2 * fig.u, float(s), 0.5, "", pts[1][1], ws[2])



def shoe_profile(fig, p: Painter, ax: float, ay: float, g: float, direction: float, k: float, far: str,
                  knee_y: float, ankle_w: float) -> None:
    """A shoe seen from the side, toes towards ``direction``; ``k`` < 1 foreshortens it (front/back views)."""
    u = fig.u
    kind = fig.a["shoe_type"]
    shoe, sole, skin = "shoe" + far, "sole" + far, "skin" + far

    def X(dx: float) -> float:
        return ax + direction * k * dx * u

    def Y(dy: float) -> float:
        return g - dy * u

    if kind == "high_heels":
        heel = (X(-0.15), Y(0.32))
        p.poly(skin, [(X(-0.12), ay - 0.05 * u), (X(0.1), ay - 0.05 * u), (X(0.6), Y(0.06)), (X(0.2), Y(0.14)),
                      heel])
        p.poly(shoe, [heel, (X(-0.05), Y(0.34)), (X(0.3), Y(0.16)), (X(0.66), Y(0.08)), (X(0.72), g),
                      (X(0.35), Y(0.02)), (X(-0.05), Y(0.2))])
        p.line(shoe, [(X(-0.12), heel[1]), (X(-0.13), g)], max(1.5, 0.07 * u))
        if not far:
            p.ellipse("highlight", (X(0.45), Y(0.11)), (max(1.0, 0.1 * u * k), 0.02 * u), edge=False)
        return
    if kind == "sandals":
        p.poly(skin, [(X(-0.18), ay - 0.05 * u), (X(0.12), ay - 0.05 * u), (X(0.72), Y(0.08)), (X(0.75), Y(0.04)),
                      (X(-0.2), Y(0.04))])
        p.poly(sole, [(X(-0.22), Y(0.06)), (X(0.78), Y(0.06)), (X(0.78), g), (X(-0.22), g)])
        for x in (0.05, 0.45):
            p.line(shoe, [(X(x - 0.02), Y(0.05)), (X(x + 0.05), Y(0.24))], max(1.5, 0.07 * u))
        p.line(shoe, [(X(-0.16), ay + 0.02 * u), (X(0.12), ay + 0.02 * u)], max(1.0, 0.05 * u))
        return
    length = {"sneakers": 0.8, "boots": 0.78, "leather_shoes": 0.78, "slippers": 0.84}[kind]
    height = {"sneakers": 0.28, "boots": 0.3, "leather_shoes": 0.2, "slippers": 0.18}[kind]
    body = [(X(-0.22), Y(0.06)), (X(-0.2), ay - 0.05 * u), (X(0.14), ay - 0.05 * u), (X(0.45), Y(height)),
            (X(length), Y(0.1)), (X(length), g), (X(-0.22), g)]
    if kind == "slippers":
        p.poly(skin, [(X(-0.2), ay - 0.05 * u), (X(0.14), ay - 0.05 * u), (X(0.3), Y(0.1)), (X(-0.2), Y(0.08))])
        body = [(X(-0.24), Y(0.1)), (X(0.15), Y(0.12)), (X(0.4), Y(height)), (X(length), Y(0.1)), (X(length), g),
                (X(-0.24), g)]
    p.poly(shoe, body)
    if kind == "boots":
        top = ay - 0.4 * (ay - knee_y)
        w = ankle_w * 1.6
        p.poly(shoe, [(ax - w, top), (ax + w, top), (ax + w * 1.05, ay + 0.05 * u), (ax - w * 1.05, ay + 0.05 * u)])
        p.line("shoe_line", [(ax - w, top + 0.12 * u), (ax + w, top + 0.12 * u)], 1)
    sole_h = {"sneakers": 0.11, "boots": 0.09, "leather_shoes": 0.05, "slippers": 0.07}[kind]
    p.poly(sole, [(X(-0.24), Y(sole_h)), (X(length + 0.02), Y(sole_h)), (X(length + 0.02), g), (X(-0.24), g)])
    if kind == "boots":
        p.poly(sole, [(X(-0.24), Y(0.14)), (X(0.05), Y(0.14)), (X(0.05), g), (X(-0.24), g)])
    if kind == "sneakers":
        for i in range(3):
            x = 0.15 + 0.1 * i
            p.line("shoe_line", [(X(x), ay + (0.02 + 0.04 * i) * u), (X(x + 0.06), ay + (0.05 + 0.04 * i) * u)], 1)
    elif kind == "leather_shoes" and not far:
        p.ellipse("highlight", (X(0.5), Y(0.13)), (max(1.0, 0.12 * u * k), 0.025 * u), -15 * direction, edge=False)
    elif kind == "slippers":
        for i in range(4):
            x = 0.3 + 0.12 * i
            p.line("shoe_line", [(X(x), Y(0.14)), (X(x + 0.03), Y(0.08))], 1)



def shoe_side(fig, p: Painter, pts: list[Point], ws: list[float], s: int) -> None:
    ax, ay = pts[2]
    shoe_profile(fig, p, ax, ay, ay + 0.2 * fig.u, 1.0, 1.0, "_far" if s == -1 else "", pts[1][1], ws[2])
