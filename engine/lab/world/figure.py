"""The pedestrian figure: body geometry from the attributes and a drawing of every attribute.

Geometry is in pixels of the 256×128 HR canvas. A figure is measured in head units ``u`` (adults are
7.4 heads tall, children 5.6); its height on the canvas encodes ``height`` (short/average/tall, children
smaller still) and its widths encode ``physique`` and ``gender`` (shoulder/hip ratio). Every part is
painted through a :class:`Painter` with *materials* ("skin", "top", "hat", …) that a modality turns into
colours, temperatures or pencil lines (``engine.lab.world.modalities``).

Tables pick what is drawn for an attribute value: ``engine.lab.world.paint_tops.TOP_DETAILS`` (top types),
``engine.lab.world.paint_headwear.HATS``/``HATS_SIDE`` (hat types) and ``engine.lab.world.paint_carried.CARRIED``
(carried items); the person's fixed look is ``engine.lab.world.look``, the drawing primitives
``engine.lab.world.painter``.

Views: ``front`` (face visible), ``back`` (hair, back of garments, backpack body) and ``side`` (profile,
drawn facing right; the caller may mirror it). ``swing`` in [-1, 1] is the walking phase: arms and legs
swing in opposite directions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.lab.world.look import Look
from engine.lab.world.paint_carried import (
    CARRIED,
    backpack_behind,
    suitcase_front,
)
from engine.lab.world.paint_head import hair_back_view_long, hair_behind, head_front_back, long_hair_front_locks
from engine.lab.world.paint_headwear import hood_behind
from engine.lab.world.paint_profile import draw_side
from engine.lab.world.paint_shoes import shoes_front
from engine.lab.world.paint_tops import TOP_DETAILS
from engine.lab.world.painter import Painter, Point, arc, cut_chain, point_at, tube_sides

CANVAS_H, CANVAS_W = 256, 128

#: Figure height as a fraction of the canvas height, by height attribute (adults) — children are smaller.
HEIGHT_FRACTION = {"short": 0.775, "average": 0.855, "tall": 0.93}
CHILD_HEIGHT_FRACTION = {"short": 0.6, "average": 0.68, "tall": 0.74}
SHOULDER_K = {"slim": 0.88, "average": 1.0, "heavy": 1.18}
WAIST_K = {"slim": 0.8, "average": 1.0, "heavy": 1.55}
HIP_K = {"slim": 0.86, "average": 1.0, "heavy": 1.3}
LIMB_K = {"slim": 0.78, "average": 1.0, "heavy": 1.4}


@dataclass
class Pose:
    view: str          # "front" | "back" | "side"
    swing: float       # walking phase in [-1, 1]
    cx: float          # horizontal centre on the canvas
    ground: float      # y of the soles
    scale: float       # size jitter (≈ 1)


class Figure:
    """One person in one pose; :meth:`draw` paints it back to front."""

    def __init__(self, attrs: dict[str, str], look: Look, pose: Pose):
        self.a, self.look, self.pose = attrs, look, pose
        child = attrs["age"] == "child"
        frac = (CHILD_HEIGHT_FRACTION if child else HEIGHT_FRACTION)[attrs["height"]]
        if attrs["age"] == "elderly":
            frac *= 0.975
        self.H = H = CANVAS_H * frac * pose.scale
        self.heads = 5.6 if child else 7.4
        self.u = u = H / self.heads
        self.female = attrs["gender"] == "female"
        phys = attrs["physique"]
        self.lw = LIMB_K[phys] * (0.92 if child else 1.0)
        self.cx, self.gy = pose.cx, pose.ground
        self.top_y = self.gy - H
        # head
        self.head_ax = 0.39 * u * look.head_k * (1.06 if child else 1.0) * (1.05 if phys == "heavy" else 1.0)
        self.head_ay = 0.5 * u * look.head_k
        self.head_cy = self.top_y + self.head_ay
        self.chin_y = self.head_cy + self.head_ay
        # torso levels
        self.ys = self.top_y + (1.22 if child else 1.3) * u
        self.crotch = self.top_y + (2.95 if child else 3.78) * u
        torso = self.crotch - self.ys
        self.chest_y = self.ys + 0.3 * torso
        self.waist_y = self.ys + 0.62 * torso
        self.hip_y = self.ys + 0.86 * torso
        self.ankle_y = self.gy - 0.2 * u
        self.knee_y = (self.crotch + self.ankle_y) / 2 + 0.05 * u
        g = 1.0 if not self.female else 0.86
        self.sh = u * g * SHOULDER_K[phys] * look.shoulder_k * (0.92 if child else 1.0)
        self.wa = u * (0.7 if not self.female else 0.58) * WAIST_K[phys]
        self.hp = u * (0.74 if not self.female else 0.84) * HIP_K[phys]
        if child:
            self.wa, self.hp = self.wa * 0.95, self.hp * 0.88
        self.lean = 0.22 * u if attrs["age"] == "elderly" else 0.0
        self.carry = attrs["carrying_type"]
        self.side = look.carry_side
        self.sw = pose.swing * (0.6 if attrs["age"] == "elderly" else 1.0)
        self.lwpx = max(1.0, u / 18.0)   # detail stroke width
        if pose.view == "side":
            self._side_geometry()
        else:
            self._front_geometry()

    # ------------------------------------------------------------------------------------------ geometry
    def _front_geometry(self) -> None:
        u, cx, lw = self.u, self.cx, self.lw
        self.arms = {}
        for s in (-1, 1):
            jx = cx + s * max(self.sh - 0.17 * u, self.wa + 0.05 * u)
            j = (jx, self.ys + 0.4 * u)
            upper, fore = 0.6 * (self.crotch - self.ys), 0.5 * (self.crotch - self.ys)
            spread = math.radians(7 + (6 if self.a["physique"] == "heavy" else 0))
            swing = self.sw * s
            fore_k = 1.0 - 0.18 * max(0.0, swing)
            e = (j[0] + s * math.sin(spread) * upper, j[1] + math.cos(spread) * upper * (1 - 0.08 * abs(swing)))
            w = (e[0] + s * math.sin(spread * 0.5) * fore - s * 0.1 * u * max(0.0, swing),
                 e[1] + fore * fore_k)
            if s == self.side:
                if self.carry == "suitcase":
                    a = math.radians(24)
                    e = (j[0] + s * math.sin(a) * upper, j[1] + math.cos(a) * upper)
                    w = (e[0] + s * math.sin(a) * fore, e[1] + math.cos(a) * fore)
                elif self.carry == "umbrella" and self.look.umbrella_open:
                    e = (j[0] + s * 0.35 * u, j[1] + upper * 0.95)
                    w = (cx + s * 0.55 * u, self.ys + 0.95 * u)
                elif self.carry in ("handbag", "plastic_bag", "umbrella"):
                    a = math.radians(12)
                    e = (j[0] + s * math.sin(a) * upper, j[1] + math.cos(a) * upper)
                    w = (e[0] + s * math.sin(a * 0.6) * fore, e[1] + math.cos(a * 0.6) * fore)
            ws = [0.2 * u * lw, 0.15 * u * lw, 0.11 * u * (lw ** 0.7)]
            self.arms[s] = ([j, e, w], ws)
        self.legs = {}
        for s in (-1, 1):
            lift = 0.22 * u * max(0.0, self.sw * s)
            hip = (cx + s * self.hp * 0.5, self.crotch - 0.45 * u)
            knee = (cx + s * self.hp * 0.42, self.knee_y - lift * 0.5)
            ankle = (cx + s * (self.hp * 0.4 + 0.02 * u), self.ankle_y - lift)
            ws = [self.hp * 0.52, 0.2 * u * lw, 0.12 * u * (lw ** 0.5)]
            self.legs[s] = ([hip, knee, ankle], ws, lift)

    def _side_geometry(self) -> None:
        u, cx, lw = self.u, self.cx, self.lw
        d = {"slim": 0.88, "average": 1.0, "heavy": 1.3}[self.a["physique"]]
        self.d_back = 0.36 * u * d
        self.d_front = 0.38 * u * d
        upper, fore = 0.6 * (self.crotch - self.ys), 0.5 * (self.crotch - self.ys)
        self.arms = {}
        for s in (1, -1):   # 1 = near arm, -1 = far arm
            j = (cx + self.lean * 0.6, self.ys + 0.3 * u)
            th = math.radians(30) * self.sw * s
            if s == 1 and self.carry == "suitcase":
                th = math.radians(-28)
            elif s == 1 and self.carry == "umbrella" and self.look.umbrella_open:
                th = math.radians(20)
            elif s == 1 and self.carry in ("handbag", "plastic_bag", "umbrella"):
                th = math.radians(4)
            e = (j[0] + math.sin(th) * upper, j[1] + math.cos(th) * upper)
            bend = math.radians(14 + 14 * max(0.0, math.sin(th)))
            if s == 1 and self.carry == "umbrella" and self.look.umbrella_open:
                bend = math.radians(110)
            w = (e[0] + math.sin(th + bend) * fore, e[1] + math.cos(th + bend) * fore)
            ws = [0.19 * u * lw, 0.15 * u * lw, 0.11 * u * (lw ** 0.7)]
            self.arms[s] = ([j, e, w], ws)
        self.legs = {}
        thigh = self.knee_y - (self.crotch - 0.45 * u)
        shin = self.ankle_y - self.knee_y
        for s in (1, -1):
            hip = (cx, self.crotch - 0.45 * u)
            ph = math.radians(24) * self.sw * s
            knee = (hip[0] + math.sin(ph) * thigh, hip[1] + math.cos(ph) * thigh)
            bend = math.radians(18) * max(0.0, -self.sw * s)
            ankle = (knee[0] + math.sin(ph - bend) * shin, knee[1] + math.cos(ph - bend) * shin)
            ws = [0.34 * u * lw * (1.1 if self.female else 1.0), 0.2 * u * lw, 0.12 * u * (lw ** 0.5)]
            self.legs[s] = ([hip, knee, ankle], ws, 0.0)
        low = max(self.legs[1][0][2][1], self.legs[-1][0][2][1])
        drop = self.ankle_y - low
        for s in (1, -1):
            pts, ws, _ = self.legs[s]
            pts = [pts[0], (pts[1][0], pts[1][1] + drop * 0.5), (pts[2][0], pts[2][1] + drop)]
            self.legs[s] = (pts, ws, self.ankle_y - pts[2][1])

    # ------------------------------------------------------------------------------------------ drawing
    def draw(self, p: Painter, shadow: bool = True) -> None:
        if shadow:
            self._shadow(p)
        if self.pose.view == "side":
            draw_side(self, p)
        else:
            self._draw_front_back(p)

    def _shadow(self, p: Painter) -> None:
        u = self.u
        pts = arc(self.cx, self.gy - 0.02 * u, self.hp * 1.5, 0.16 * u, 0, 360, 16)
        p.blend_poly("shadow", pts, 0.28, edge=False)

    def _draw_front_back(self, p: Painter) -> None:
        front = self.pose.view == "front"
        a = self.a
        if self.carry == "backpack" and front:
            backpack_behind(self, p)
        hair_behind(self, p)
        if a["hat_type"] == "hood":
            hood_behind(self, p)
        if self.carry == "suitcase":
            suitcase_front(self, p)
        for s in (-1, 1):
            pts, ws, _ = self.legs[s]
            p.tube("skin", pts, ws)
        self._bottom_front(p)
        shoes_front(self, p)
        self._neck(p)
        self._torso_front(p)
        self._arms_front(p)
        if a["hairstyle"] == "long" and front and a["hat_type"] != "hood":
            long_hair_front_locks(self, p)
        if not front:
            hair_back_view_long(self, p)
        head_front_back(self, p)
        self._carry_front(p)

    # ---------------------------------------------------------------------------------------- body parts
    def _neck(self, p: Painter) -> None:
        u, cx = self.u, self.cx
        nk = 0.19 * u * (self.lw ** 0.5)
        pts = [(cx - nk, self.chin_y - 0.3 * u), (cx + nk, self.chin_y - 0.3 * u), (cx + nk * 1.1, self.ys + 0.15 * u),
               (cx - nk * 1.1, self.ys + 0.15 * u)]
        p.poly("skin", pts, edge=False)
        p.line("skin_shade", [(cx - nk, self.chin_y + 0.02 * u), (cx + nk, self.chin_y + 0.02 * u)],
               width=self.lwpx * 1.5)
        p.outline("skin", [pts[0], pts[3]])
        p.outline("skin", [pts[1], pts[2]])

    def top_hem(self) -> float:
        t = self.a["top_type"]
        u = self.u
        if t == "coat":
            return self.knee_y + (0.0 if self.female else -0.1 * u)
        if t == "dress":
            return self.skirt_hem(self.a["bottom_length"])
        if t == "jacket":
            return self.crotch - 0.05 * u
        if t in ("shirt", "blouse"):
            return self.crotch - 0.12 * u
        return self.crotch - 0.18 * u

    def skirt_hem(self, length: str) -> float:
        u = self.u
        if length == "short":
            return self.crotch + 0.42 * (self.knee_y - self.crotch)
        if length == "knee":
            return self.knee_y + 0.12 * u
        return self.ankle_y - 0.2 * u

    def _torso_profile(self, hem: float, shoulder: float | None = None, flare: float = 0.0) -> list[Point]:
        """(y, half-width) of a top's side from the shoulder down to its hem."""
        u = self.u
        sh = shoulder if shoulder is not None else self.sh
        chest = max(self.sh * 0.9, self.wa * 1.1) if not self.female else max(self.sh * 0.92, self.wa * 1.22)
        profile = [(self.ys + 0.22 * u, sh), (self.ys + 0.55 * u, self.sh * 0.97), (self.chest_y, chest),
                   (self.waist_y, self.wa), (self.hip_y, max(self.hp, self.wa) * 1.03)]
        side = [(y, w) for y, w in profile if y < hem]
        hem_w = side[-1][1] if side else self.wa
        if hem > self.hip_y:
            hem_w = max(self.hp, self.wa) * 1.05 + (hem - self.hip_y) * flare
        side.append((hem, hem_w))
        return side

    def _torso_points(self, hem: float, neck_depth: float, shoulder: float | None = None,
                      vneck: bool = False, flare: float = 0.0) -> list[Point]:
        u, cx = self.u, self.cx
        sh = shoulder if shoulder is not None else self.sh
        side = self._torso_profile(hem, shoulder, flare)
        hem_w = side[-1][1]
        nk = 0.26 * u
        right = [(cx + nk, self.ys - 0.04 * u), (cx + sh * 0.72, self.ys + 0.04 * u)]
        right += [(cx + w, y) for y, w in side]
        left = [(cx - x + cx, y) for x, y in right][::-1]
        hem_curve = [(cx + hem_w * 0.5, hem + 0.03 * u), (cx - hem_w * 0.5, hem + 0.03 * u)]
        if vneck:
            neck = [(cx, self.ys + neck_depth)]
        else:
            neck = arc(cx, self.ys - 0.04 * u, nk, neck_depth + 0.04 * u, 180, 0, 9)[1:-1]
        return right + hem_curve + left + neck

    def _torso_front(self, p: Painter) -> None:
        a, u, cx = self.a, self.u, self.cx
        front = self.pose.view == "front"
        t = a["top_type"]
        hem = self.top_hem()
        sleeveless = a["top_length"] == "sleeveless"
        if sleeveless:
            self._skin_shoulders(p)
        for s in (-1, 1):       # rounded shoulder caps where the arms join the torso
            joint, widths = self.arms[s][0][0], self.arms[s][1]
            p.circle("skin" if sleeveless else "top", joint, widths[0] * (1.0 if sleeveless else 1.03))
        neck_depth = {"t_shirt": 0.22, "shirt": 0.3, "blouse": 0.5, "sweater": 0.2, "hoodie": 0.2, "jacket": 0.6,
                      "coat": 0.55, "vest": 0.45, "dress": 0.42}[t] * u
        if not front:
            neck_depth = 0.08 * u
        shoulder = self.sh * (0.7 if sleeveless else 1.0) if t in ("vest", "dress", "blouse") else None
        if t == "vest":
            shoulder = self.sh * 0.62
        flare = {"coat": 0.1, "dress": 0.14}.get(t, 0.0)
        pts = self._torso_points(hem, neck_depth, shoulder, vneck=front and t in ("jacket", "coat"), flare=flare)
        if front and t in ("jacket", "coat"):
            inner = self._torso_points(self.ys + 1.2 * u, 0.15 * u)
            p.poly("inner", inner, edge=False)
        p.poly("top", pts)
        # light from the upper left: the right flank of the garment is in shade
        prof = self._torso_profile(hem, shoulder, flare)[1:]
        shade_pts = [(cx + w * 0.68, y) for y, w in prof] + [(cx + w * 0.96, y) for y, w in prof[::-1]]
        p.poly("top_shade", shade_pts, edge=False)
        TOP_DETAILS[t](self, p, front, hem)

    def _skin_shoulders(self, p: Painter) -> None:
        u = self.u
        pts = self._torso_points(self.ys + 0.9 * u, 0.2 * u)
        p.poly("skin", pts)

    # arms ----------------------------------------------------------------------------------------
    def _arms_front(self, p: Painter) -> None:
        length = self.a["top_length"]
        for s in (-1, 1):
            pts, ws = self.arms[s]
            self.arm(p, pts, ws, length, "")

    def arm(self, p: Painter, pts: list[Point], ws: list[float], length: str, far: str) -> None:
        u = self.u
        t = self.a["top_type"]
        p.tube("skin" + far, pts, ws)
        wrist = pts[-1]
        d = (pts[2][0] - pts[1][0], pts[2][1] - pts[1][1])
        n = math.hypot(*d) or 1.0
        hand = (wrist[0] + d[0] / n * 0.16 * u, wrist[1] + d[1] / n * 0.16 * u)
        p.ellipse("skin" + far, hand, (0.12 * u * self.lw ** 0.5, 0.17 * u), math.degrees(math.atan2(d[1], d[0])) - 90)
        if length == "sleeveless":
            return
        loose = {"coat": 1.25, "jacket": 1.25, "hoodie": 1.2, "sweater": 1.15, "blouse": 1.18}.get(t, 1.12)
        if length == "short_sleeve":
            spts, sws = cut_chain(pts, ws, 0.3 if t != "blouse" else 0.26)
            sws = [sws[0] * 1.03] + [w * loose for w in sws[1:]]
            if t == "blouse":
                sws[-1] *= 1.12
            p.tube("top" + far, spts, sws)
        else:
            sws = [ws[0] * 1.03] + [w * loose for w in ws[1:]]
            p.tube("top" + far, pts, sws)
            if t in ("sweater", "hoodie", "coat", "jacket"):
                cuff, cws = cut_chain(pts[::-1], sws[::-1], 0.1)
                left, right = tube_sides(cuff, cws)
                p.line("top_line", [left[-1], right[-1]], self.lwpx)
            elif t == "shirt":
                cuff, cws = cut_chain(pts[::-1], sws[::-1], 0.07)
                left, right = tube_sides(cuff, cws)
                p.line("top_line", [left[-1], right[-1]], 1)

    # bottoms -------------------------------------------------------------------------------------
    def bottom_length_t(self, kind: str, length: str) -> float:
        """Fraction of the hip→ankle chain a trouser-like garment covers."""
        if length == "long" and kind != "shorts":
            return 1.0
        if length in ("knee", "long"):
            return 0.58
        return 0.22 if kind != "jeans" else 0.25

    def _bottom_front(self, p: Painter) -> None:
        a, u, cx = self.a, self.u, self.cx
        kind, length = a["bottom_type"], a["bottom_length"]
        front = self.pose.view == "front"
        if a["top_type"] == "dress":
            return
        if kind == "skirt":
            hem = self.skirt_hem(length)
            top_w = self.wa * 1.04
            hem_w = max(self.hp * 1.08, top_w) + (hem - self.hip_y) * 0.22
            pts = [(cx - top_w, self.waist_y), (cx + top_w, self.waist_y), (cx + self.hp * 1.06, self.hip_y),
                   (cx + hem_w, hem), (cx - hem_w, hem), (cx - self.hp * 1.06, self.hip_y)]
            p.poly("bottom", pts)
            for s in (-1, 1):
                p.line("bottom_line", [(cx + s * self.wa * 0.45, self.hip_y), (cx + s * hem_w * 0.5, hem - 0.05 * u)],
                       1)
            p.line("bottom_line", [(cx - top_w, self.waist_y + 0.16 * u), (cx + top_w, self.waist_y + 0.16 * u)], 1)
            return
        loose = {"trousers": 1.14, "jeans": 1.08, "shorts": 1.3, "leggings": 1.0}[kind]
        t = self.bottom_length_t(kind, length)
        mat = "bottom"
        legs = {}
        for s in (-1, 1):
            pts, ws, _ = self.legs[s]
            cpts, cws = cut_chain(pts, [w * loose for w in ws], t)
            cws[0] = ws[0] * 1.05
            if t >= 1.0:
                cws[-1] = max(cws[-1], 0.16 * u * self.lw ** 0.5) * (1.0 if kind == "leggings" else 1.15)
            legs[s] = (cpts, cws)
            p.tube(mat, cpts, cws)
        pelvis = [(cx - self.wa * 1.02, self.waist_y), (cx + self.wa * 1.02, self.waist_y),
                  (cx + self.hp * 1.04, self.hip_y), (cx + self.hp * 1.02, self.crotch - 0.2 * u),
                  (cx, self.crotch + 0.02 * u), (cx - self.hp * 1.02, self.crotch - 0.2 * u),
                  (cx - self.hp * 1.04, self.hip_y)]
        p.poly(mat, pelvis, edge=False)
        p.outline(mat, [pelvis[2], pelvis[1], pelvis[0], pelvis[6]])
        p.outline(mat, [pelvis[2], pelvis[3]])
        p.outline(mat, [pelvis[6], pelvis[5]])
        for s in (-1, 1):
            self._leg_garment_details(p, kind, length, legs[s][0], legs[s][1], s, front)
        if kind == "jeans":
            for s in (-1, 1):
                if front:
                    p.line("bottom_line", arc(cx + s * self.hp * 0.95, self.waist_y, self.hp * 0.5, 0.45 * u,
                                              90 if s > 0 else 0, 180 if s > 0 else 90, 6), 1)
                else:
                    x = cx + s * self.hp * 0.5
                    y = self.waist_y + 0.35 * u
                    p.line("bottom_line", [(x - 0.24 * u, y), (x - 0.2 * u, y + 0.45 * u), (x, y + 0.55 * u),
                                           (x + 0.2 * u, y + 0.45 * u), (x + 0.24 * u, y)], 1, closed=True)
            p.line("bottom_line", [(cx, self.waist_y + 0.2 * u), (cx, self.crotch - 0.05 * u)], 1)
        elif kind == "trousers" and self.look.belt:
            p.line("dark", [(cx - self.wa, self.waist_y + 0.07 * u), (cx + self.wa, self.waist_y + 0.07 * u)],
                   max(2.0, 0.12 * u))

    def _leg_garment_details(self, p: Painter, kind: str, length: str, pts: list[Point], ws: list[float], s: int,
                             front: bool) -> None:
        """Cues that tell trouser-like garments apart: jeans seams, fade and cuffs; trouser creases; leggings sheen."""
        u = self.u
        left, right = tube_sides(pts, ws)
        outer = left if s < 0 else right
        mid = [((lx + rx) / 2, (ly + ry) / 2) for (lx, ly), (rx, ry) in zip(left, right, strict=True)]
        if kind == "jeans":
            fade = [((m[0] * 0.6 + o[0] * 0.4), m[1]) for m, o in zip(mid, outer, strict=True)]
            top, bottom_ = point_at(fade, 0.12), point_at(fade, 0.62)
            p.ellipse("bottom_hi", ((top[0] + bottom_[0]) / 2, (top[1] + bottom_[1]) / 2),
                      (ws[1] * 0.45, abs(bottom_[1] - top[1]) / 2), edge=False)
            seam = [(o[0] - s * 0.05 * u, o[1]) for o in outer]
            p.line("bottom_line", seam, 1)
            if length == "long":
                cuff_y = pts[-1][1] - 0.14 * u
                p.line("bottom_hi", [(pts[-1][0] - ws[-1] * 0.95, cuff_y), (pts[-1][0] + ws[-1] * 0.95, cuff_y)],
                       max(1.5, 0.09 * u))
        elif kind == "trousers":
            p.line("bottom_shade", mid[:1] + mid[1:], max(1.0, 0.05 * u))
        elif kind == "leggings":
            sheen = [(m[0] - s * ws[i] * 0.35, m[1]) for i, m in enumerate(mid)]
            p.line("bottom_hi", sheen, max(1.0, 0.06 * u))
        elif kind == "shorts":
            p.line("bottom_shade", [mid[0], mid[-1]], 1)
            hem_l, hem_r = left[-1], right[-1]
            p.line("bottom_shade", [(hem_l[0], hem_l[1] - 0.1 * u), (hem_r[0], hem_r[1] - 0.1 * u)], 1)

    # carried items (front and back; the tables are in engine.lab.world.paint_carried) -------------------
    def _carry_front(self, p: Painter) -> None:
        kind = self.carry
        if kind == "none":
            return
        CARRIED[kind](self, p)
