"""The details of each top type (collars, plackets, zips, ribbing), drawn over the torso of a ``Figure``
(``engine.lab.world.figure``); ``TOP_DETAILS`` maps a ``top_type`` to its painter. ``fig`` is the figure."""

from __future__ import annotations

from engine.lab.world.painter import Painter, arc


def hem_band(fig, p: Painter, hem: float, height: float, ribs: bool) -> None:
    u, cx = fig.u, fig.cx
    w = max(fig.hp, fig.wa) * 1.03
    p.line("top_line", [(cx - w * 0.98, hem - height), (cx + w * 0.98, hem - height)], fig.lwpx)
    if ribs:
        step = max(2.5, 0.12 * u)
        x = cx - w + step
        while x < cx + w - 1:
            p.line("top_line", [(x, hem - height + 1), (x, hem - 1)], 1)
            x += step



def detail_t_shirt(fig, p: Painter, front: bool, hem: float) -> None:
    u, cx = fig.u, fig.cx
    depth = 0.22 * u if front else 0.08 * u
    p.line("top_line", arc(cx, fig.ys - 0.04 * u, 0.3 * u, depth + 0.1 * u, 180, 0, 9)[1:-1], fig.lwpx * 1.4)



def detail_shirt(fig, p: Painter, front: bool, hem: float) -> None:
    u, cx = fig.u, fig.cx
    if front:
        for s in (-1, 1):
            p.poly("top", [(cx + s * 0.04 * u, fig.ys + 0.3 * u), (cx + s * 0.3 * u, fig.ys - 0.08 * u),
                           (cx + s * 0.42 * u, fig.ys + 0.12 * u), (cx + s * 0.2 * u, fig.ys + 0.42 * u)])
        p.line("top_line", [(cx, fig.ys + 0.3 * u), (cx, hem)], fig.lwpx)
        y = fig.ys + 0.55 * u
        while y < hem - 0.15 * u:
            p.circle("top_accent", (cx + 0.07 * u, y), max(0.9, 0.05 * u), edge=False)
            y += 0.42 * u
        pk = cx - fig.sh * 0.55
        p.outline("top", [(pk - 0.22 * u, fig.ys + 0.6 * u), (pk - 0.22 * u, fig.ys + 1.0 * u),
                          (pk + 0.22 * u, fig.ys + 1.0 * u), (pk + 0.22 * u, fig.ys + 0.6 * u)])
        p.line("top_line", [(pk - 0.22 * u, fig.ys + 0.66 * u), (pk + 0.22 * u, fig.ys + 0.66 * u)], 1)
    else:
        p.poly("top", [(cx - 0.34 * u, fig.ys - 0.06 * u), (cx + 0.34 * u, fig.ys - 0.06 * u),
                       (cx + 0.36 * u, fig.ys + 0.12 * u), (cx - 0.36 * u, fig.ys + 0.12 * u)])
        p.line("top_line", [(cx - fig.sh * 0.8, fig.ys + 0.55 * u), (cx + fig.sh * 0.8, fig.ys + 0.55 * u)],
               fig.lwpx)



def detail_blouse(fig, p: Painter, front: bool, hem: float) -> None:
    u, cx = fig.u, fig.cx
    if front:
        pts = arc(cx, fig.ys - 0.04 * u, 0.26 * u, 0.54 * u, 180, 0, 9)
        for i in range(1, len(pts) - 1):
            p.circle("top", pts[i], 0.09 * u)
        p.line("top_line", [(cx - fig.wa * 0.95, fig.waist_y + 0.1 * u), (cx + fig.wa * 0.95,
                                                                            fig.waist_y + 0.1 * u)],
               fig.lwpx)
    for s in (-1, 1):
        y = fig.waist_y + 0.2 * u
        p.line("top_line", [(cx + s * fig.wa * 0.45, y), (cx + s * fig.wa * 0.5, hem - 0.1 * u)], 1)



def detail_sweater(fig, p: Painter, front: bool, hem: float) -> None:
    u, cx = fig.u, fig.cx
    depth = 0.2 * u if front else 0.08 * u
    p.line("top_line", arc(cx, fig.ys - 0.04 * u, 0.3 * u, depth + 0.12 * u, 180, 0, 9)[1:-1], fig.lwpx * 2.2)
    y = fig.ys + 0.55 * u
    step = max(3.0, 0.17 * u)
    while y < hem - 0.35 * u:
        w = fig.sh * 0.88 if y < fig.chest_y else fig.wa * 0.95
        p.line("top_line", [(cx - w, y), (cx - w * 0.33, y + 1), (cx + w * 0.33, y), (cx + w, y + 1)], 1)
        y += step
    hem_band(fig, p, hem, 0.3 * u, ribs=True)



def detail_hoodie(fig, p: Painter, front: bool, hem: float) -> None:
    u, cx = fig.u, fig.cx
    if fig.a["hat_type"] != "hood":
        if front:
            pts = arc(cx, fig.ys + 0.02 * u, 0.46 * u, 0.3 * u, 180, 0, 11)
            p.line("top_shade", pts, fig.lwpx * 2.5)
            p.outline("top", pts)
        else:
            pts = arc(cx, fig.ys + 0.05 * u, 0.5 * u, 0.75 * u, 0, 180, 11)
            p.poly("top_shade", pts, edge=False)
            p.outline("top", pts)
    if front:
        for s in (-1, 1):
            x = cx + s * 0.14 * u
            p.line("top_line", [(x, fig.ys + 0.2 * u), (x + s * 0.02 * u, fig.ys + 0.95 * u)], fig.lwpx)
            p.circle("top_accent", (x + s * 0.02 * u, fig.ys + 0.98 * u), max(1.0, 0.05 * u), edge=False)
        top, bot = fig.waist_y + 0.05 * u, hem - 0.28 * u
        w0, w1 = fig.wa * 0.55, fig.wa * 0.8
        p.outline("top", [(cx - w1, bot), (cx - w0, top), (cx + w0, top), (cx + w1, bot)])
        p.outline("top", [(cx - w1, bot), (cx + w1, bot)])
    hem_band(fig, p, hem, 0.26 * u, ribs=True)



def detail_jacket(fig, p: Painter, front: bool, hem: float) -> None:
    u, cx = fig.u, fig.cx
    if front:
        for s in (-1, 1):
            x = cx + s * 0.05 * u
            p.line("metal", [(cx + s * 0.03 * u, fig.ys + 0.62 * u), (x, hem)], fig.lwpx)
            p.poly("top", [(cx + s * 0.26 * u, fig.ys - 0.1 * u), (cx + s * 0.42 * u, fig.ys + 0.05 * u),
                           (cx + s * 0.12 * u, fig.ys + 0.6 * u), (cx + s * 0.04 * u, fig.ys + 0.58 * u)])
            pkx = cx + s * fig.wa * 0.6
            p.line("top_line", [(pkx, fig.waist_y + 0.15 * u), (pkx + s * 0.18 * u, fig.waist_y + 0.6 * u)],
                   fig.lwpx)
        p.line("top", [(cx + 0.04 * u, fig.ys + 0.62 * u), (cx + 0.04 * u, hem)], 1)
    else:
        p.line("top_line", [(cx - fig.sh * 0.85, fig.ys + 0.5 * u), (cx + fig.sh * 0.85, fig.ys + 0.5 * u)],
               fig.lwpx)
    hem_band(fig, p, hem, 0.16 * u, ribs=False)



def detail_coat(fig, p: Painter, front: bool, hem: float) -> None:
    u, cx = fig.u, fig.cx
    if front:
        for s in (-1, 1):
            p.poly("top", [(cx + s * 0.26 * u, fig.ys - 0.1 * u), (cx + s * 0.55 * u, fig.ys + 0.1 * u),
                           (cx + s * 0.34 * u, fig.ys + 0.55 * u), (cx + s * 0.02 * u, fig.ys + 1.0 * u),
                           (cx, fig.ys + 0.55 * u)])
        p.line("top_line", [(cx + 0.06 * u, fig.ys + 0.6 * u), (cx + 0.06 * u, hem)], fig.lwpx)
        for k in range(3):
            y = fig.ys + 1.15 * u + k * 0.55 * u
            for s in (-1, 1):
                p.circle("top_accent", (cx + s * 0.26 * u, y), max(1.0, 0.07 * u))
        if fig.look.belt:
            p.poly("top", [(cx - fig.wa * 1.02, fig.waist_y - 0.08 * u), (cx + fig.wa * 1.02,
                                                                            fig.waist_y - 0.08 * u),
                           (cx + fig.wa * 1.02, fig.waist_y + 0.1 * u), (cx - fig.wa * 1.02,
                                                                           fig.waist_y + 0.1 * u)])
        for s in (-1, 1):
            pkx = cx + s * fig.hp * 0.62
            p.line("top_line", [(pkx - 0.2 * u, fig.hip_y), (pkx + 0.2 * u, fig.hip_y)], fig.lwpx)
    else:
        p.line("top_line", [(cx, fig.waist_y), (cx, hem)], fig.lwpx)
        if fig.look.belt:
            p.line("top_line", [(cx - fig.wa, fig.waist_y), (cx + fig.wa, fig.waist_y)], fig.lwpx * 2)



def detail_vest(fig, p: Painter, front: bool, hem: float) -> None:
    u, cx = fig.u, fig.cx
    if front:
        p.line("top_line", arc(cx, fig.ys - 0.04 * u, 0.27 * u, 0.5 * u, 180, 0, 9)[1:-1], fig.lwpx)
    hem_band(fig, p, hem, 0.1 * u, ribs=False)



def detail_dress(fig, p: Painter, front: bool, hem: float) -> None:
    u, cx = fig.u, fig.cx
    y = fig.waist_y
    p.line("top_line", [(cx - fig.wa, y), (cx + fig.wa, y)], fig.lwpx * 1.5)
    for s in (-1, 1):
        p.line("top_line", [(cx + s * fig.wa * 0.4, y + 0.1 * u), (cx + s * fig.hp * 0.7, hem - 0.1 * u)], 1)
    if front:
        p.line("top_line", arc(cx, fig.ys - 0.04 * u, 0.27 * u, 0.46 * u, 180, 0, 9)[1:-1], fig.lwpx)


TOP_DETAILS = {
    "t_shirt": detail_t_shirt,
    "shirt": detail_shirt,
    "blouse": detail_blouse,
    "sweater": detail_sweater,
    "hoodie": detail_hoodie,
    "jacket": detail_jacket,
    "coat": detail_coat,
    "vest": detail_vest,
    "dress": detail_dress,
}
