"""Hats and hoods on the head of a ``Figure`` (``engine.lab.world.figure``): ``HATS`` maps a ``hat_type`` to its
front/back painter, ``HATS_SIDE`` to its profile painter; the hood is drawn behind the head and as a rim
around the face. ``fig`` is the figure."""

from __future__ import annotations

from engine.lab.world.painter import Painter, arc


def hat_cap(fig, p: Painter, front: bool) -> None:
    u, hx, hy, ax, ay = fig.u, fig.cx, fig.head_cy, fig.head_ax, fig.head_ay
    base = hy - 0.16 * u
    crown = arc(hx, base, ax * 1.1, ay * 0.9, 180, 360, 14)
    p.poly("hat", crown)
    p.line("hat_line", [(hx, base - ay * 0.88), (hx, base)], 1)
    p.circle("hat", (hx, base - ay * 0.9), max(1.0, 0.06 * u))
    if front:
        visor = arc(hx, base, ax * 1.2, 0.13 * u, 0, 180, 12)
        p.poly("hat_shade", visor, edge=False)
        p.poly("hat", visor[2:-2] + [(hx - ax * 1.05, base), (hx + ax * 1.05, base)][::-1])
        p.outline("hat", visor)
    else:
        p.poly("dark", arc(hx, base, 0.16 * u, 0.1 * u, 180, 360, 8))



def hat_beanie(fig, p: Painter, front: bool) -> None:
    u, hx, hy, ax, ay = fig.u, fig.cx, fig.head_cy, fig.head_ax, fig.head_ay
    base = hy - (0.05 if front else 0.0) * u
    p.poly("hat", arc(hx, base, ax * 1.12, ay * 1.12, 180, 360, 14))
    band = [(hx - ax * 1.14, base - 0.2 * u), (hx + ax * 1.14, base - 0.2 * u), (hx + ax * 1.14, base + 0.02 * u),
            (hx - ax * 1.14, base + 0.02 * u)]
    p.poly("hat_shade", band, edge=False)
    p.outline("hat", band, closed=True)
    step = max(2.0, 0.1 * u)
    x = hx - ax * 1.1 + step
    while x < hx + ax * 1.1:
        p.line("hat_line", [(x, base - 0.18 * u), (x, base)], 1)
        x += step
    if fig.look.pompom:
        p.circle("hat", (hx, base - ay * 1.12 - 0.08 * u), 0.15 * u)



def hat_brimmed_hat(fig, p: Painter, front: bool) -> None:
    u, hx, hy, ax = fig.u, fig.cx, fig.head_cy, fig.head_ax
    base = hy - 0.2 * u
    p.ellipse("hat", (hx, base), (ax * 2.0, 0.17 * u))
    crown = [(hx - ax * 0.95, base), (hx - ax * 0.9, base - 0.4 * u)] + arc(hx, base - 0.4 * u, ax * 0.9,
                                                                            0.18 * u, 180, 360, 8)[1:-1] + \
            [(hx + ax * 0.9, base - 0.4 * u), (hx + ax * 0.95, base)]
    p.poly("hat", crown)
    p.poly("dark", [(hx - ax * 0.95, base - 0.02 * u), (hx - ax * 0.93, base - 0.14 * u),
                    (hx + ax * 0.93, base - 0.14 * u), (hx + ax * 0.95, base - 0.02 * u)], edge=False)
    p.line("hat_line", arc(hx, base, ax * 1.9, 0.12 * u, 0, 180, 12), 1)



def hat_helmet(fig, p: Painter, front: bool) -> None:
    u, hx, hy, ax, ay = fig.u, fig.cx, fig.head_cy, fig.head_ax, fig.head_ay
    base = hy - 0.08 * u
    shell = arc(hx, base, ax * 1.28, ay * 1.16, 175, 365, 16)
    p.poly("hat", shell)
    p.line("hat_line", arc(hx, base, ax * 1.28, 0.08 * u, 0, 180, 8), max(1.0, 0.05 * u))
    for k in (-1, 0, 1):
        x = hx + k * ax * 0.5
        p.poly("dark", [(x - 0.05 * u, base - ay * 0.95), (x + 0.05 * u, base - ay * 0.95),
                        (x + 0.06 * u, base - ay * 0.5), (x - 0.06 * u, base - ay * 0.5)], edge=False)
    if front:
        for s in (-1, 1):
            p.line("dark", [(hx + s * ax * 0.95, base + 0.02 * u), (hx + s * ax * 0.4, fig.chin_y - 0.02 * u)], 1)



def hat_hood(fig, p: Painter, front: bool) -> None:
    """The hood's back and rim are drawn with the head (see ``_hood_behind``, ``_hood_rim``)."""
    if not front:
        u, hx, hy, ax, ay = fig.u, fig.cx, fig.head_cy, fig.head_ax, fig.head_ay
        p.ellipse("hat", (hx, hy - 0.04 * u), (ax * 1.4, ay * 1.18))
        p.line("hat_line", [(hx, hy - ay * 1.15), (hx, hy + ay)], fig.lwpx)



def hat_side_cap(fig, p: Painter, hx: float, hy: float, ax: float, ay: float) -> None:
    u = fig.u
    base = hy - 0.16 * u
    p.poly("hat", arc(hx, base, ax * 1.06, ay * 0.9, 180, 360, 14))
    p.poly("hat", [(hx + ax * 0.8, base - 0.05 * u), (hx + ax + 0.55 * u, base + 0.02 * u),
                   (hx + ax + 0.5 * u, base + 0.08 * u), (hx + ax * 0.8, base + 0.04 * u)])



def hat_side_beanie(fig, p: Painter, hx: float, hy: float, ax: float, ay: float) -> None:
    u = fig.u
    p.poly("hat", arc(hx - 0.03 * u, hy - 0.02 * u, ax * 1.08, ay * 1.12, 180, 360, 14))
    band = [(hx - ax * 1.1, hy - 0.2 * u), (hx + ax * 1.06, hy - 0.2 * u), (hx + ax * 1.06, hy),
            (hx - ax * 1.1, hy)]
    p.poly("hat_shade", band, edge=False)
    p.outline("hat", band, closed=True)
    if fig.look.pompom:
        p.circle("hat", (hx - 0.05 * u, hy - ay * 1.15 - 0.07 * u), 0.14 * u)



def hat_side_brimmed_hat(fig, p: Painter, hx: float, hy: float, ax: float, ay: float) -> None:
    u = fig.u
    base = hy - 0.2 * u
    p.ellipse("hat", (hx, base), (ax * 1.9, 0.1 * u))
    crown = [(hx - ax * 0.95, base), (hx - ax * 0.9, base - 0.4 * u)] + arc(hx, base - 0.4 * u, ax * 0.9, 0.16 * u,
                                                                            180, 360, 8)[1:-1] + \
            [(hx + ax * 0.9, base - 0.4 * u), (hx + ax * 0.95, base)]
    p.poly("hat", crown)
    p.poly("dark", [(hx - ax * 0.95, base - 0.02 * u), (hx - ax * 0.93, base - 0.14 * u),
                    (hx + ax * 0.93, base - 0.14 * u), (hx + ax * 0.95, base - 0.02 * u)], edge=False)



def hat_side_helmet(fig, p: Painter, hx: float, hy: float, ax: float, ay: float) -> None:
    u = fig.u
    base = hy - 0.08 * u
    p.poly("hat", arc(hx - 0.05 * u, base, ax * 1.25, ay * 1.15, 170, 370, 16) + [(hx + ax * 1.3, base + 0.05 * u)])
    for k in (-1, 0, 1):
        x = hx + k * ax * 0.5
        p.poly("dark", [(x - 0.06 * u, base - ay * 0.95), (x + 0.06 * u, base - ay * 0.95),
                        (x + 0.07 * u, base - ay * 0.55), (x - 0.05 * u, base - ay * 0.55)], edge=False)
    p.line("dark", [(hx - 0.05 * u, base + 0.05 * u), (hx + ax * 0.6, fig.chin_y - 0.02 * u)], 1)



def hood_behind(fig, p: Painter) -> None:
    u, hx, hy, ax, ay = fig.u, fig.cx, fig.head_cy, fig.head_ax, fig.head_ay
    body = [(hx - ax * 1.42, hy), (hx + ax * 1.42, hy), (hx + fig.sh * 0.75, fig.ys + 0.3 * u),
            (hx - fig.sh * 0.75, fig.ys + 0.3 * u)]
    p.poly("hat", body)
    p.ellipse("hat", (hx, hy - 0.04 * u), (ax * 1.42, ay * 1.2))
    if fig.pose.view == "back":
        p.line("hat_line", [(hx, hy - ay * 1.15), (hx, fig.ys + 0.2 * u)], fig.lwpx)



def hood_rim(fig, p: Painter) -> None:
    u, hx, hy, ax, ay = fig.u, fig.cx, fig.head_cy, fig.head_ax, fig.head_ay
    rim = arc(hx, hy + 0.02 * u, ax * 1.08, ay * 1.06, 0, 360, 24)
    p.line("hat_shade", rim, max(2.0, 0.14 * u), closed=True)
    p.outline("hat", arc(hx, hy + 0.02 * u, ax * 1.2, ay * 1.15, 0, 360, 24), closed=True)
    p.line("hair", arc(hx, hy - 0.05 * u, ax * 0.8, ay * 0.85, 200, 340, 8), max(1.5, 0.1 * u))
    if fig.a["top_type"] == "hoodie":
        for s in (-1, 1):
            x = hx + s * 0.16 * u
            p.line("top_line", [(x, fig.chin_y), (x + s * 0.02 * u, fig.ys + 0.9 * u)], fig.lwpx)


HATS = {
    "cap": hat_cap,
    "beanie": hat_beanie,
    "brimmed_hat": hat_brimmed_hat,
    "helmet": hat_helmet,
    "hood": hat_hood,
}
HATS_SIDE = {
    "cap": hat_side_cap,
    "beanie": hat_side_beanie,
    "brimmed_hat": hat_side_brimmed_hat,
    "helmet": hat_side_helmet,
}
