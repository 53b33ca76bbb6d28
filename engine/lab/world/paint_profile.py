"""The side view of a ``Figure`` (``engine.lab.world.figure``), drawn facing right, far limbs first: legs, pelvis
or skirt, neck, torso, head and hair in profile, with the carried items and hats that show from the side.
``fig`` is the figure."""

from __future__ import annotations

from engine.lab.world.paint_carried import CARRIED, backpack_side, shoulder_bag_side, suitcase_side
from engine.lab.world.paint_headwear import HATS_SIDE
from engine.lab.world.paint_shoes import shoe_side
from engine.lab.world.painter import Painter, arc, cut_chain, tube_sides


def draw_side(fig, p: Painter) -> None:
    a = fig.a
    # far limbs first
    far_pts, far_ws = fig.arms[-1]
    fig.arm(p, far_pts, far_ws, a["top_length"], "_far")
    leg_side(fig, p, -1)
    if fig.carry == "suitcase":
        suitcase_side(fig, p)
    leg_side(fig, p, 1)
    if a["bottom_type"] == "skirt" and a["top_type"] != "dress":
        skirt_side(fig, p)
    else:
        pelvis_side(fig, p)
    neck_side(fig, p)
    hair_side_back(fig, p)
    torso_side(fig, p)
    if fig.carry == "backpack":
        backpack_side(fig, p)
    if fig.carry == "shoulder_bag":
        shoulder_bag_side(fig, p)
    near_pts, near_ws = fig.arms[1]
    fig.arm(p, near_pts, near_ws, a["top_length"], "")
    head_side(fig, p)
    if fig.carry in ("handbag", "plastic_bag", "umbrella"):
        CARRIED[fig.carry](fig, p)



def leg_side(fig, p: Painter, s: int) -> None:
    a, u = fig.a, fig.u
    far = "_far" if s == -1 else ""
    pts, ws, lift = fig.legs[s]
    p.tube("skin" + far, pts, ws)
    kind, length = a["bottom_type"], a["bottom_length"]
    if kind != "skirt" and a["top_type"] != "dress":
        loose = {"trousers": 1.14, "jeans": 1.08, "shorts": 1.3, "leggings": 1.0}[kind]
        t = fig.bottom_length_t(kind, length)
        cpts, cws = cut_chain(pts, [w * loose for w in ws], t)
        if t >= 1.0:
            cws[-1] = max(cws[-1], 0.16 * u * fig.lw ** 0.5) * (1.0 if kind == "leggings" else 1.15)
        p.tube("bottom" + far, cpts, cws)
        if kind == "jeans":
            left, right = tube_sides(cpts, [w * 0.8 for w in cws])
            p.line("bottom_line", left[1:], 1)
    shoe_side(fig, p, pts, ws, s)



def pelvis_side(fig, p: Painter) -> None:
    a, u, cx = fig.a, fig.u, fig.cx
    if a["top_type"] == "dress":
        return
    front = fig.d_front * (1.3 if a["physique"] == "heavy" else 1.0)
    back = fig.d_back * (1.2 if fig.female else 1.08)
    pts = [(cx - fig.d_back, fig.waist_y), (cx + front, fig.waist_y), (cx + front * 1.02, fig.hip_y),
           (cx + fig.legs[1][1][0] * 0.9, fig.crotch), (cx - back * 0.8, fig.crotch),  # thigh width
           (cx - back, fig.hip_y)]
    p.poly("bottom", pts, edge=False)
    p.outline("bottom", [pts[5], pts[0], pts[1], pts[2]])
    if a["bottom_type"] == "jeans":
        p.line("bottom_line", arc(cx + front * 0.6, fig.waist_y, front * 0.5, 0.4 * u, 90, 180, 5), 1)
        p.outline("bottom", [(cx - back * 0.9, fig.waist_y + 0.3 * u), (cx - back * 0.55,
                                                                         fig.waist_y + 0.75 * u)])
    elif a["bottom_type"] == "trousers" and fig.look.belt:
        p.line("dark", [(cx - fig.d_back, fig.waist_y + 0.07 * u), (cx + front, fig.waist_y + 0.07 * u)],
               max(2.0, 0.12 * u))



def skirt_side(fig, p: Painter) -> None:
    u, cx = fig.u, fig.cx
    hem = fig.skirt_hem(fig.a["bottom_length"])
    spread = 0.35 * u + (hem - fig.hip_y) * 0.2
    pts = [(cx - fig.d_back, fig.waist_y), (cx + fig.d_front, fig.waist_y), (cx + fig.d_front * 1.1,
                                                                                 fig.hip_y),
           (cx + spread + 0.1 * u * fig.sw, hem), (cx - spread + 0.1 * u * fig.sw, hem),
           (cx - fig.d_back * 1.2, fig.hip_y)]
    p.poly("bottom", pts)
    p.line("bottom_line", [(cx, fig.hip_y), (cx + 0.1 * u * fig.sw, hem - 0.05 * u)], 1)



def neck_side(fig, p: Painter) -> None:
    u, cx = fig.u, fig.cx + fig.lean
    pts = [(cx - 0.15 * u, fig.chin_y - 0.35 * u), (cx + 0.16 * u, fig.chin_y - 0.2 * u),
           (cx + 0.16 * u - fig.lean * 0.4, fig.ys + 0.2 * u), (cx - 0.2 * u - fig.lean * 0.4,
                                                                  fig.ys + 0.2 * u)]
    p.poly("skin", pts)



def torso_side(fig, p: Painter) -> None:
    a, u, cx = fig.a, fig.u, fig.cx
    t = a["top_type"]
    hem = fig.top_hem()
    lean = fig.lean
    chest = fig.d_front * (1.3 if fig.female else 1.08)
    belly = fig.d_front * (1.35 if a["physique"] == "heavy" else 0.95)
    back_hip = fig.d_back * (1.2 if fig.female else 1.05)
    flare = {"coat": 0.12, "dress": 0.16}.get(t, 0.0)
    def at(y: float) -> float:
        return lean * max(0.0, (fig.waist_y - y) / (fig.waist_y - fig.ys))
    front = [(cx + 0.12 * u + at(fig.ys), fig.ys - 0.02 * u), (cx + chest * 0.9 + at(fig.ys + 0.4 * u),
                                                                 fig.ys + 0.4 * u),
             (cx + chest + at(fig.chest_y), fig.chest_y), (cx + belly, fig.waist_y), (cx + belly * 1.02,
                                                                                         fig.hip_y)]
    back = [(cx - fig.d_back * 1.05, fig.hip_y), (cx - fig.d_back * 0.95, fig.waist_y),
            (cx - fig.d_back * 1.05 + at(fig.chest_y) * 0.7, fig.chest_y),
            (cx - fig.d_back * 0.95 + at(fig.ys + 0.4 * u) * 0.9, fig.ys + 0.3 * u),
            (cx - 0.18 * u + at(fig.ys), fig.ys - 0.05 * u)]
    if t in ("vest",) or a["top_length"] == "sleeveless":
        p.poly("skin", [back[-1], front[0], front[1], back[-2]])
    front = [q for q in front if q[1] < hem]
    back = [q for q in back if q[1] < hem]
    extra = max(0.0, hem - fig.hip_y) * flare
    front.append((cx + belly * 1.02 + extra, hem))
    back.insert(0, (cx - back_hip - extra, hem))
    if t == "vest":
        front[0] = (front[0][0] - 0.1 * u, front[0][1] + 0.25 * u)
        back[-1] = (back[-1][0] + 0.1 * u, back[-1][1] + 0.25 * u)
    pts = front + back
    p.poly("top", pts)
    p.poly("top_shade", [(cx - fig.d_back * 0.9, fig.chest_y), (cx - fig.d_back * 0.5, fig.chest_y),
                         (cx - fig.d_back * 0.5, hem - 0.1 * u), (cx - fig.d_back * 0.9,
                                                                   hem - 0.1 * u)], edge=False)
    if t in ("sweater", "hoodie"):
        p.line("top_line", [(back[0][0] + 1, hem - 0.26 * u), (front[-1][0] - 1, hem - 0.26 * u)], fig.lwpx)
    if t == "sweater":
        y = fig.ys + 0.6 * u
        while y < hem - 0.4 * u:
            p.line("top_line", [(cx - fig.d_back * 0.8, y), (cx + fig.d_front * 0.8, y)], 1)
            y += max(3.0, 0.17 * u)
    if t == "hoodie" and a["hat_type"] != "hood":
        p.poly("top_shade", [(cx - 0.5 * u, fig.ys - 0.05 * u), (cx - 0.1 * u, fig.ys - 0.05 * u),
                             (cx - 0.25 * u, fig.ys + 0.55 * u), (cx - fig.d_back * 1.1, fig.ys + 0.4 * u)])
    if t in ("shirt", "jacket", "coat"):
        p.poly("top", [(front[0][0] - 0.05 * u, fig.ys - 0.12 * u), (front[0][0] + 0.06 * u, fig.ys + 0.12 * u),
                       (front[0][0] - 0.3 * u, fig.ys + 0.05 * u), (front[0][0] - 0.3 * u, fig.ys - 0.1 * u)])
    if t in ("jacket", "coat"):
        p.line("top_line", [(cx + chest * 0.55, fig.ys + 0.3 * u), (cx + belly * 0.9, hem)], fig.lwpx)
    if t == "dress" or (t == "coat" and fig.look.belt):
        p.line("top_line", [(cx - fig.d_back, fig.waist_y), (cx + belly, fig.waist_y)], fig.lwpx * 1.5)



def head_side(fig, p: Painter) -> None:
    a, u = fig.a, fig.u
    hx = fig.cx + 0.06 * u + fig.lean
    hy = fig.head_cy + fig.lean * 0.3
    ax, ay = fig.head_ax * 1.12, fig.head_ay
    hat = a["hat_type"]
    if hat == "hood":
        p.poly("hat", [(hx - 0.1 * u, hy + 0.4 * u), (hx - 0.2 * u, fig.ys + 0.2 * u), (hx - 0.8 * u,
                                                                                         fig.ys + 0.3 * u),
                       (hx - ax * 1.2, hy)])
    p.ellipse("skin", (hx, hy), (ax, ay))
    # profile: nose, chin, eye, brow, mouth, ear
    fx = hx + ax
    p.poly("skin", [(fx - 0.04 * u, hy - 0.05 * u), (fx + 0.11 * u, hy + 0.16 * u), (fx - 0.02 * u, hy + 0.2 * u)],
           edge=False)
    p.outline("skin", [(fx - 0.02 * u, hy - 0.03 * u), (fx + 0.11 * u, hy + 0.16 * u), (fx - 0.02 * u,
                                                                                        hy + 0.2 * u)])
    ey = hy + 0.02 * u
    p.ellipse("eye_white", (fx - 0.14 * u, ey), (0.045 * u, 0.04 * u), edge=False)
    p.circle("pupil", (fx - 0.12 * u, ey), 0.03 * u, edge=False)
    p.line("brow", [(fx - 0.22 * u, ey - 0.1 * u), (fx - 0.06 * u, ey - 0.11 * u)], max(1.0, 0.05 * u))
    if fig.female:
        p.ellipse("lips", (fx - 0.04 * u, hy + 0.33 * u), (0.05 * u, 0.035 * u), edge=False)
    else:
        p.line("mouth", [(fx - 0.12 * u, hy + 0.34 * u), (fx - 0.01 * u, hy + 0.33 * u)], 1)
    if fig.look.beard:
        p.poly("hair", arc(hx, hy, ax, ay, 20, 80, 6) + [(hx + ax * 0.7, hy + 0.3 * u), (hx + 0.1 * u,
                                                                                         hy + 0.25 * u)],
               edge=False)
    if hat != "hood":
        p.ellipse("skin", (hx - 0.08 * u, hy + 0.05 * u), (0.1 * u, 0.15 * u))
        hair_side(fig, p, hx, hy, ax, ay)
    if a["age"] == "elderly":
        p.line("skin_line", [(fx - 0.12 * u, ey + 0.2 * u), (fx - 0.06 * u, ey + 0.32 * u)], 1)
    if hat != "none" and hat != "hood":
        HATS_SIDE[hat](fig, p, hx, hy, ax, ay)
    elif hat == "hood":
        hood = arc(hx - 0.08 * u, hy - 0.04 * u, ax * 1.18, ay * 1.16, 95, 300, 16)
        opening = arc(hx + ax * 0.3, hy + 0.02 * u, ax * 0.35, ay * 0.95, 300, 95, 8)
        p.poly("hat", hood + opening)
        p.line("hat_shade", opening[1:-1], max(2.0, 0.12 * u))



def hair_side(fig, p: Painter, hx: float, hy: float, ax: float, ay: float) -> None:
    u = fig.u
    style = fig.a["hairstyle"]
    if style == "bald":
        p.poly("hair", arc(hx, hy, ax * 1.0, ay * 0.98, 120, 185, 7) + [(hx - 0.2 * u, hy + 0.05 * u)], edge=False)
        if fig.a["hat_type"] == "none":
            p.ellipse("highlight", (hx, hy - ay * 0.65), (ax * 0.3, ay * 0.1), edge=False)
        return
    bottom = {"short": hy + 0.25 * u, "medium": fig.chin_y + 0.1 * u, "long": fig.chin_y,
              "ponytail": hy + 0.25 * u, "bun": hy + 0.25 * u}[style]
    back = 1.1 if style in ("medium", "long") else 1.04
    pts = arc(hx, hy, ax * back, ay * 1.06, 150, 320, 14) + [(hx + ax * 0.7, hy - ay * 0.55),
                                                             (hx + 0.0 * u, hy - ay * 0.35),
                                                             (hx - 0.15 * u, hy + 0.05 * u),
                                                             (hx - ax * 0.6, bottom)]
    p.poly("hair", pts)
    p.line("hair_line", arc(hx, hy, ax * 0.8, ay * 0.85, 200, 250, 5), 1)
    if style == "bun":
        p.circle("hair", (hx - ax * 0.95, hy - ay * 0.55), 0.25 * u)
    elif style == "ponytail":
        s = fig.sw * 0.12 * u
        p.poly("hair", [(hx - ax * 0.9, hy - 0.15 * u), (hx - ax * 1.25, hy), (hx - ax * 1.3 - s,
                                                                               fig.ys + 0.6 * u),
                        (hx - ax * 1.05 - s, fig.ys + 0.3 * u), (hx - ax * 0.9, hy + 0.1 * u)])
        p.circle("dark", (hx - ax * 1.0, hy - 0.05 * u), 0.07 * u, edge=False)



def hair_side_back(fig, p: Painter) -> None:
    """Long hair behind the neck and back in the side view."""
    if fig.a["hairstyle"] != "long" or fig.a["hat_type"] == "hood":
        return
    u = fig.u
    hx = fig.cx + 0.06 * u + fig.lean
    hy = fig.head_cy
    ax = fig.head_ax * 1.12
    pts = [(hx - ax * 0.2, hy), (hx - ax * 1.12, hy), (hx - ax * 1.2, fig.ys + 0.3 * u),
           (hx - ax * 1.0, fig.ys + 1.1 * u), (hx - ax * 0.35, fig.ys + 1.05 * u), (hx - ax * 0.1, fig.ys)]
    p.poly("hair", pts)
