"""Carried items of a ``Figure`` (``engine.lab.world.figure``): ``CARRIED`` maps a ``carrying_type`` to its
painter; backpack, shoulder bag and suitcase also have parts drawn behind or beside the body. ``fig`` is the
figure."""

from __future__ import annotations

import math

from engine.lab.world.painter import Painter, Point, arc


def backpack_behind(fig, p: Painter) -> None:
    u, cx = fig.u, fig.cx
    w = fig.sh * 1.08
    pts = [(cx - w * 0.8, fig.ys - 0.12 * u), (cx + w * 0.8, fig.ys - 0.12 * u), (cx + w, fig.ys + 0.3 * u),
           (cx + w, fig.waist_y + 0.3 * u), (cx - w, fig.waist_y + 0.3 * u), (cx - w, fig.ys + 0.3 * u)]
    p.poly("carry", pts)
    p.line("carry_shade", arc(cx, fig.ys - 0.12 * u, 0.25 * u, 0.2 * u, 180, 360, 7), max(1.5, 0.07 * u))



def hand_point(fig) -> Point:
    pts, _ = fig.arms[fig.side if fig.pose.view != "side" else 1]
    w, e = pts[2], pts[1]
    d = (w[0] - e[0], w[1] - e[1])
    n = math.hypot(*d) or 1.0
    return (w[0] + d[0] / n * 0.2 * fig.u, w[1] + d[1] / n * 0.2 * fig.u)



def suitcase_front(fig, p: Painter) -> None:
    u, s = fig.u, fig.side
    hx, hy = hand_point(fig)
    cx = hx + s * 0.15 * u
    top = min(fig.gy - 2.1 * u, hy + 0.5 * u)
    bw = 0.62 * u
    for k in (-1, 1):
        p.line("metal", [(hx + k * 0.15 * u, hy), (cx + k * 0.15 * u, top)], max(1.0, 0.05 * u))
    p.line("dark", [(hx - 0.18 * u, hy), (hx + 0.18 * u, hy)], max(2.0, 0.08 * u))
    body = [(cx - bw, top), (cx + bw, top), (cx + bw, fig.gy - 0.15 * u), (cx - bw, fig.gy - 0.15 * u)]
    p.poly("carry", body)
    p.poly("carry_shade", [(cx + bw * 0.55, top + 1), (cx + bw - 1, top + 1), (cx + bw - 1, fig.gy - 0.16 * u),
                           (cx + bw * 0.55, fig.gy - 0.16 * u)], edge=False)
    for k in (-1, 0, 1):
        p.line("carry_line", [(cx + k * bw * 0.45, top + 0.15 * u), (cx + k * bw * 0.45, fig.gy - 0.3 * u)], 1)
    for k in (-1, 1):
        p.circle("dark", (cx + k * bw * 0.7, fig.gy - 0.08 * u), 0.08 * u)



def backpack_side(fig, p: Painter) -> None:
    u, cx = fig.u, fig.cx
    x1 = cx - fig.d_back * 0.9 + fig.lean * 0.5
    x0 = x1 - 0.6 * u
    top, bot = fig.ys + 0.05 * u, fig.waist_y + 0.3 * u
    pts = [(x1, top), (x0 + 0.1 * u, top - 0.02 * u), (x0, top + 0.2 * u), (x0 - 0.02 * u, bot), (x1, bot)]
    p.poly("carry", pts)
    p.poly("carry", [(x0, bot - 0.8 * u), (x0 - 0.14 * u, bot - 0.7 * u), (x0 - 0.14 * u, bot - 0.1 * u),
                     (x0, bot - 0.05 * u)])
    p.line("carry_shade", [(cx - 0.05 * u + fig.lean, fig.ys), (cx + fig.d_front * 0.6, fig.ys + 0.6 * u),
                           (cx + fig.d_front * 0.3, fig.waist_y)], max(2.0, 0.1 * u))



def shoulder_bag_side(fig, p: Painter) -> None:
    u, cx = fig.u, fig.cx
    p.line("carry_shade", [(cx - fig.d_back * 0.5 + fig.lean, fig.ys), (cx + fig.d_front * 0.8,
                                                                           fig.hip_y - 0.3 * u)],
           max(2.0, 0.09 * u))
    c = (cx + fig.d_front * 0.5, fig.hip_y + 0.05 * u)
    bw, bh = 0.42 * u, 0.36 * u
    p.poly("carry", [(c[0] - bw, c[1] - bh), (c[0] + bw, c[1] - bh), (c[0] + bw, c[1] + bh), (c[0] - bw,
                                                                                              c[1] + bh)])
    p.poly("carry", [(c[0] - bw, c[1] - bh), (c[0] + bw, c[1] - bh), (c[0] + bw, c[1]), (c[0] - bw,
                                                                                         c[1] + 0.05 * u)])
    p.circle("metal", (c[0], c[1]), max(1.0, 0.05 * u))



def suitcase_side(fig, p: Painter) -> None:
    u = fig.u
    hx, hy = hand_point(fig)
    cx = hx - 0.5 * u
    top = min(fig.gy - 2.0 * u, hy + 0.45 * u)
    bw = 0.35 * u
    p.line("metal", [(hx, hy), (cx + bw * 0.6, top)], max(1.5, 0.06 * u))
    body = [(cx - bw, top), (cx + bw, top), (cx + bw, fig.gy - 0.15 * u), (cx - bw, fig.gy - 0.15 * u)]
    p.poly("carry", body)
    for k in (-1, 1):
        p.line("carry_line", [(cx + k * bw * 0.5, top + 0.15 * u), (cx + k * bw * 0.5, fig.gy - 0.3 * u)], 1)
    p.circle("dark", (cx, fig.gy - 0.08 * u), 0.08 * u)



def carry_backpack(fig, p: Painter) -> None:
    u, cx = fig.u, fig.cx
    if fig.pose.view == "front":
        for s in (-1, 1):
            x0 = cx + s * fig.sh * 0.55
            pts = [(x0, fig.ys + 0.02 * u), (x0 + s * 0.02 * u, fig.ys + 0.7 * u),
                   (cx + s * fig.sh * 0.68, fig.waist_y + 0.1 * u)]
            p.tube("carry", pts, [0.1 * u, 0.1 * u, 0.09 * u], cap_start=False)
        y = fig.ys + 0.75 * u
        p.line("carry_shade", [(cx - fig.sh * 0.5, y), (cx + fig.sh * 0.5, y)], max(1.5, 0.06 * u))
        p.poly("dark", [(cx - 0.07 * u, y - 0.06 * u), (cx + 0.07 * u, y - 0.06 * u),
                        (cx + 0.07 * u, y + 0.06 * u), (cx - 0.07 * u, y + 0.06 * u)], edge=False)
        return
    w = fig.sh * 0.85
    top, bot = fig.ys + 0.05 * u, fig.waist_y + 0.35 * u
    body = arc(cx, top + 0.25 * u, w, 0.3 * u, 180, 360, 10) + [(cx + w * 1.02, bot), (cx - w * 1.02, bot)]
    p.poly("carry", body)
    p.poly("carry_shade", [(cx + w * 0.55, top + 0.3 * u), (cx + w, top + 0.3 * u), (cx + w * 1.02, bot - 0.02 * u),
                           (cx + w * 0.55, bot - 0.02 * u)], edge=False)
    pocket = [(cx - w * 0.7, bot - 0.75 * u), (cx + w * 0.7, bot - 0.75 * u), (cx + w * 0.75, bot - 0.08 * u),
              (cx - w * 0.75, bot - 0.08 * u)]
    p.poly("carry", pocket)
    p.line("carry_line", arc(cx, top + 0.35 * u, w * 0.8, 0.2 * u, 185, 355, 9), 1)
    p.line("carry_line", [(cx - w * 0.6, bot - 0.6 * u), (cx + w * 0.6, bot - 0.6 * u)], 1)
    p.line("carry_shade", arc(cx, top - 0.05 * u, 0.22 * u, 0.18 * u, 180, 360, 7), max(1.5, 0.07 * u))



def carry_shoulder_bag(fig, p: Painter) -> None:
    u, cx, s = fig.u, fig.cx, fig.side
    bag_c = (cx + s * (fig.hp + 0.25 * u), fig.hip_y + 0.05 * u)
    start = (cx - s * fig.sh * 0.5, fig.ys + 0.02 * u)
    p.line("carry_shade", [start, (bag_c[0] - s * 0.1 * u, bag_c[1] - 0.35 * u)], max(2.0, 0.09 * u))
    bw, bh = 0.48 * u, 0.38 * u
    body = [(bag_c[0] - bw, bag_c[1] - bh), (bag_c[0] + bw, bag_c[1] - bh), (bag_c[0] + bw * 1.02, bag_c[1] + bh),
            (bag_c[0] - bw * 1.02, bag_c[1] + bh)]
    p.poly("carry", body)
    flap = [(bag_c[0] - bw, bag_c[1] - bh), (bag_c[0] + bw, bag_c[1] - bh), (bag_c[0] + bw, bag_c[1] + 0.05 * u),
            (bag_c[0], bag_c[1] + 0.15 * u), (bag_c[0] - bw, bag_c[1] + 0.05 * u)]
    p.poly("carry", flap)
    p.circle("metal", (bag_c[0], bag_c[1] + 0.1 * u), max(1.0, 0.06 * u))



def carry_handbag(fig, p: Painter) -> None:
    u = fig.u
    hx, hy = hand_point(fig)
    top = hy + 0.3 * u
    bw, bh = 0.42 * u, 0.6 * u
    p.line("carry_shade", arc(hx, top, bw * 0.6, 0.42 * u, 180, 360, 9), max(1.5, 0.07 * u))
    body = [(hx - bw * 0.85, top), (hx + bw * 0.85, top), (hx + bw, top + bh), (hx - bw, top + bh)]
    p.poly("carry", body)
    p.line("carry_line", [(hx - bw * 0.85, top + 0.15 * u), (hx + bw * 0.85, top + 0.15 * u)], 1)
    p.circle("metal", (hx, top + 0.15 * u), max(1.0, 0.05 * u))



def carry_plastic_bag(fig, p: Painter) -> None:
    u = fig.u
    hx, hy = hand_point(fig)
    top = hy + 0.2 * u
    for s in (-1, 1):
        p.line("carry_line", [(hx, hy), (hx + s * 0.25 * u, top + 0.1 * u)], 1)
    body = [(hx - 0.3 * u, top), (hx - 0.2 * u, top + 0.1 * u), (hx + 0.2 * u, top + 0.1 * u), (hx + 0.3 * u, top),
            (hx + 0.45 * u, top + 0.5 * u), (hx + 0.42 * u, top + 1.0 * u), (hx, top + 1.08 * u),
            (hx - 0.42 * u, top + 1.0 * u), (hx - 0.45 * u, top + 0.5 * u)]
    p.blend_poly("carry", body, 0.82)
    for k in (-1, 1):
        p.line("carry_line", [(hx + k * 0.15 * u, top + 0.25 * u), (hx + k * 0.22 * u, top + 0.75 * u)], 1)



def carry_umbrella(fig, p: Painter) -> None:
    u = fig.u
    hx, hy = hand_point(fig)
    if fig.look.umbrella_open:
        # an open canopy held over the shoulder, tilted outwards so the head stays visible
        d = fig.side if fig.pose.view != "side" else 1
        tilt = math.radians(30) * d
        c, sn = math.cos(tilt), math.sin(tilt)
        centre = (fig.cx + d * 1.3 * u, fig.top_y + 0.5 * u)

        def rot(x: float, y: float) -> Point:
            return (centre[0] + x * c - y * sn, centre[1] + x * sn + y * c)

        width, height, ribs = 1.9 * u, 0.8 * u, 6
        apex = rot(0.0, -height)
        p.line("metal", [(hx, hy + 0.15 * u), apex], max(1.5, 0.06 * u))
        dome = [rot(x - 0.0, y - centre[1]) for x, y in
                [(px - centre[0], py) for px, py in arc(centre[0], centre[1], width, height, 180, 360, 16)]]
        scallop = []
        for k in range(ribs, -1, -1):
            x = -width + 2 * width * k / ribs
            scallop.append(rot(x, 0.0))
            if k > 0:
                scallop.append(rot(x - width / ribs, -0.12 * u))
        p.poly("carry", dome + scallop)
        for k in range(1, ribs):
            p.line("carry_line", [apex, rot(-width + 2 * width * k / ribs, 0.0)], 1)
        p.circle("metal", rot(0.0, -height - 0.06 * u), max(1.0, 0.06 * u))
        return
    # closed umbrella hanging from the hand: hook, furled canopy, tip
    p.line("dark", arc(hx - 0.12 * u, hy, 0.12 * u, 0.14 * u, 180, 360, 7), max(1.5, 0.07 * u))
    bottom = min(fig.gy - 0.3 * u, hy + 2.6 * u)
    pts = [(hx - 0.04 * u, hy + 0.15 * u), (hx + 0.04 * u, hy + 0.15 * u), (hx + 0.13 * u, hy + 0.6 * u),
           (hx + 0.02 * u, bottom), (hx - 0.02 * u, bottom), (hx - 0.13 * u, hy + 0.6 * u)]
    p.poly("carry", pts)
    p.line("carry_line", [(hx - 0.12 * u, hy + 0.8 * u), (hx + 0.12 * u, hy + 0.8 * u)], 1)
    p.line("metal", [(hx, bottom), (hx, bottom + 0.2 * u)], 1)



def carry_suitcase(fig, p: Painter) -> None:
    """Drawn before the body (``_suitcase_front``); nothing to add on top."""


CARRIED = {
    "backpack": carry_backpack,
    "shoulder_bag": carry_shoulder_bag,
    "handbag": carry_handbag,
    "plastic_bag": carry_plastic_bag,
    "umbrella": carry_umbrella,
    "suitcase": carry_suitcase,
}
