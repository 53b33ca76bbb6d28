"""The head of a ``Figure`` (``engine.lab.world.figure``) in the front and back views: skin, face (eyes, brows,
nose, mouth, beard, glasses of age) and hair by style, behind and over the head. ``fig`` is the figure."""

from __future__ import annotations

from engine.lab.world.paint_headwear import HATS, hood_rim
from engine.lab.world.painter import Painter, arc


def head_front_back(fig, p: Painter) -> None:
    a, u, cx = fig.a, fig.u, fig.cx
    front = fig.pose.view == "front"
    hx, hy, ax, ay = cx, fig.head_cy, fig.head_ax, fig.head_ay
    for s in (-1, 1):
        p.ellipse("skin", (hx + s * ax * 0.98, hy + 0.06 * u), (0.09 * u, 0.15 * u))
    p.ellipse("skin", (hx, hy), (ax, ay))
    hat = a["hat_type"]
    if front:
        if hat == "hood":
            hood_rim(fig, p)
        face(fig, p)
    if hat != "hood":
        hair_top_front_back(fig, p, front)
    if hat != "none":
        HATS[hat](fig, p, front)



def face(fig, p: Painter) -> None:
    a, u, cx = fig.a, fig.u, fig.cx
    hy = fig.head_cy
    child = a["age"] == "child"
    ey = hy + 0.02 * u
    ex = 0.16 * u
    er = (0.085 * u if child else 0.075 * u, 0.05 * u)
    for s in (-1, 1):
        p.ellipse("eye_white", (cx + s * ex, ey), er, edge=False)
        p.circle("pupil", (cx + s * ex, ey + 0.005 * u), 0.04 * u, edge=False)
        bw = max(1.0, 0.05 * u)
        p.line("brow", [(cx + s * (ex - 0.09 * u), ey - 0.1 * u), (cx + s * (ex + 0.09 * u), ey - 0.13 * u)], bw)
        if fig.female and not child:
            p.line("pupil", [(cx + s * (ex + 0.06 * u), ey - 0.03 * u), (cx + s * (ex + 0.11 * u),
                                                                         ey - 0.07 * u)], 1)
    p.line("skin_line", [(cx, ey + 0.05 * u), (cx + 0.03 * u, ey + 0.2 * u), (cx - 0.03 * u, ey + 0.22 * u)], 1)
    my = ey + 0.33 * u
    if fig.look.beard and fig.pose.view == "front":
        pts = arc(cx, hy + 0.02 * u, fig.head_ax * 0.98, fig.head_ay * 0.98, 10, 170, 12)
        inner = arc(cx, my - 0.02 * u, 0.17 * u, 0.08 * u, 170, 10, 8)
        p.poly("hair", pts + inner, edge=False)
    if fig.female:
        p.ellipse("lips", (cx, my), (0.1 * u, 0.04 * u))
    else:
        p.line("mouth", [(cx - 0.1 * u, my), (cx + 0.1 * u, my + 0.005 * u)], max(1.0, 0.04 * u))
    if a["age"] == "elderly":
        for k in (0, 1):
            y = hy - 0.28 * u + k * 0.07 * u
            p.line("skin_line", [(cx - 0.16 * u, y), (cx + 0.16 * u, y)], 1)
        for s in (-1, 1):
            p.line("skin_line", [(cx + s * 0.11 * u, ey + 0.2 * u), (cx + s * 0.15 * u, ey + 0.34 * u)], 1)
    elif a["age"] == "middle_aged":
        for s in (-1, 1):
            p.line("skin_line", [(cx + s * 0.1 * u, ey + 0.22 * u), (cx + s * 0.13 * u, ey + 0.32 * u)], 1)



def hair_behind(fig, p: Painter) -> None:
    """Hair mass that lies behind the head and body in the front view (medium/long/ponytail/bun)."""
    a, u, cx = fig.a, fig.u, fig.cx
    style = a["hairstyle"]
    if a["hat_type"] == "hood" or fig.pose.view != "front":
        return
    hx, hy, ax, ay = cx, fig.head_cy, fig.head_ax, fig.head_ay
    if style == "medium":
        bottom = fig.chin_y + 0.15 * u
        pts = arc(hx, hy, ax * 1.16, ay * 1.08, 180, 360, 12) + [(hx + ax * 1.2, bottom), (hx - ax * 1.2, bottom)]
        p.poly("hair", pts)
    elif style == "long":
        bottom = fig.ys + 1.05 * u
        pts = arc(hx, hy, ax * 1.18, ay * 1.08, 180, 360, 12) + [(hx + ax * 1.3, fig.ys), (hx + ax * 1.45, bottom),
                                                               (hx - ax * 1.45, bottom), (hx - ax * 1.3, fig.ys)]
        p.poly("hair", pts)
    elif style == "ponytail":
        s = fig.look.hair_part
        x0 = hx + s * ax * 0.7
        pts = [(x0, hy), (x0 + s * 0.45 * u, hy + 0.5 * u), (x0 + s * 0.5 * u, fig.ys + 0.55 * u),
               (x0 + s * 0.3 * u, fig.ys + 0.75 * u), (x0 + s * 0.15 * u, hy + 0.55 * u)]
        p.poly("hair", pts)
        p.line("hair_line", [(x0 + s * 0.2 * u, hy + 0.35 * u), (x0 + s * 0.4 * u, fig.ys + 0.5 * u)], 1)
    elif style == "bun":
        p.circle("hair", (hx, fig.top_y - 0.02 * u), 0.27 * u)
        p.line("hair_line", arc(hx, fig.top_y - 0.02 * u, 0.17 * u, 0.12 * u, 200, 340, 6), 1)



def hair_back_view_long(fig, p: Painter) -> None:
    """In the back view long hair and ponytails hang over the back (drawn after the torso)."""
    a, u, cx = fig.a, fig.u, fig.cx
    if a["hat_type"] == "hood":
        return
    hx, hy, ax = cx, fig.head_cy, fig.head_ax
    style = a["hairstyle"]
    if style == "long":
        bottom = fig.ys + 1.15 * u
        pts = [(hx - ax * 1.1, hy), (hx + ax * 1.1, hy), (hx + ax * 1.3, fig.ys + 0.2 * u), (hx + ax * 1.2,
                                                                                              bottom),
               (hx, bottom + 0.1 * u), (hx - ax * 1.2, bottom), (hx - ax * 1.3, fig.ys + 0.2 * u)]
        p.poly("hair", pts)
        for k in (-2, -1, 0, 1, 2):
            x = hx + k * ax * 0.38
            p.line("hair_line", [(x, fig.chin_y), (x * 1.0 + k * 0.05 * u, bottom - 0.1 * u)], 1)
    elif style == "ponytail":
        s = fig.sw * 0.15 * u
        pts = [(hx - 0.13 * u, hy + 0.3 * u), (hx + 0.13 * u, hy + 0.3 * u), (hx + 0.18 * u + s, fig.ys + 0.5 * u),
               (hx + s, fig.ys + 0.95 * u), (hx - 0.18 * u + s, fig.ys + 0.5 * u)]
        p.poly("hair", pts)
        p.line("hair_line", [(hx, hy + 0.4 * u), (hx + s, fig.ys + 0.85 * u)], 1)



def hair_top_front_back(fig, p: Painter, front: bool) -> None:
    a, u, cx = fig.a, fig.u, fig.cx
    hx, hy, ax, ay = cx, fig.head_cy, fig.head_ax, fig.head_ay
    style = a["hairstyle"]
    hat = a["hat_type"]
    if style == "bald":
        if front:
            for s in (-1, 1):
                a0 = 90 - s * 90
                p.line("hair", arc(hx, hy, ax * 0.97, ay * 0.97, a0 - s * 28, a0 + s * 6, 5), max(1.5, 0.07 * u))
        else:
            p.poly("hair", arc(hx, hy, ax * 1.02, ay * 1.0, -8, 188, 12), edge=False)
            p.poly("skin", arc(hx, hy, ax * 0.8, ay * 0.98, 40, 140, 8), edge=False)
            p.poly("skin", arc(hx, hy, ax, ay * 0.98, 180, 360, 12) + [(hx + ax, hy - 0.02 * u),
                                                                       (hx - ax, hy - 0.02 * u)], edge=False)
            p.outline("skin", arc(hx, hy, ax, ay, 0, 360, 24), closed=True)
        if hat == "none":
            p.ellipse("highlight", (hx - ax * 0.3, hy - ay * 0.6), (ax * 0.25, ay * 0.1), -20, edge=False)
        return
    if not front:
        bottom = {"short": hy + 0.3 * u, "medium": fig.chin_y + 0.15 * u, "long": fig.chin_y + 0.1 * u,
                  "ponytail": hy + 0.35 * u, "bun": hy + 0.35 * u}[style]
        wide = 1.15 if style in ("medium", "long") else 1.05
        pts = arc(hx, hy, ax * wide, ay * 1.05, 180, 360, 14) + [(hx + ax * wide, bottom - 0.2 * u),
                                                                 (hx + ax * 0.8, bottom), (hx - ax * 0.8, bottom),
                                                                 (hx - ax * wide, bottom - 0.2 * u)]
        p.poly("hair", pts)
        if style in ("medium", "long"):
            for k in (-1, 0, 1):
                p.line("hair_line", [(hx + k * ax * 0.45, hy - ay * 0.5), (hx + k * ax * 0.55, bottom - 0.1 * u)],
                       1)
        if style == "bun":
            p.circle("hair", (hx, hy - 0.1 * u), 0.27 * u)
            p.line("hair_line", arc(hx, hy - 0.1 * u, 0.15 * u, 0.15 * u, 200, 340, 6), 1)
        if style == "ponytail":
            p.circle("dark", (hx, hy + 0.3 * u), 0.07 * u, edge=False)
        return
    # front: a cap of hair over the skull with a fringe line at the forehead
    fringe = hy - (0.2 if style in ("ponytail", "bun") else 0.14) * u
    side_bottom = {"short": hy + 0.05 * u, "medium": fig.chin_y - 0.05 * u, "long": fig.chin_y,
                   "ponytail": hy - 0.05 * u, "bun": hy - 0.05 * u}[style]
    wide = 1.1 if style in ("medium", "long") else 1.05
    outer = arc(hx, hy, ax * wide, ay * 1.06, 175, 365, 14)
    part = fig.look.hair_part
    inner = [(hx + ax * 0.88, side_bottom), (hx + ax * 0.9, fringe + 0.08 * u), (hx + ax * 0.55, fringe),
             (hx + part * 0.12 * u, fringe - 0.08 * u), (hx - ax * 0.55, fringe), (hx - ax * 0.9,
                                                                                   fringe + 0.08 * u),
             (hx - ax * 0.88, side_bottom)]
    p.poly("hair", [(hx - ax * wide, side_bottom)] + outer + [(hx + ax * wide, side_bottom)] + inner)
    for k in (-1, 0, 1):
        p.line("hair_line", [(hx + part * 0.12 * u + k * 0.05 * u, fringe - 0.05 * u),
                             (hx + k * ax * 0.7, hy - ay * 0.9)], 1)
    if style == "short" and fig.a["gender"] == "male":
        for s in (-1, 1):
            p.line("hair", [(hx + s * ax * 0.95, fringe + 0.1 * u), (hx + s * ax * 0.93, hy + 0.12 * u)],
                   max(1.0, 0.06 * u))



def long_hair_front_locks(fig, p: Painter) -> None:
    u, cx = fig.u, fig.cx
    hx, hy, ax = cx, fig.head_cy, fig.head_ax
    bottom = fig.ys + 0.95 * u
    for s in (-1, 1):
        pts = [(hx + s * ax * 0.85, hy), (hx + s * ax * 1.15, hy), (hx + s * ax * 1.35, fig.ys + 0.1 * u),
               (hx + s * ax * 1.28, bottom), (hx + s * ax * 0.98, bottom - 0.1 * u), (hx + s * ax * 0.9,
                                                                                      fig.chin_y)]
        p.poly("hair", pts)
        p.line("hair_line", [(hx + s * ax * 1.05, fig.chin_y), (hx + s * ax * 1.15, bottom - 0.15 * u)], 1)
