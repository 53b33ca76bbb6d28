"""The pedestrian figure: body geometry from the attributes and a drawing of every attribute.

Geometry is in pixels of the 256×128 HR canvas. A figure is measured in head units ``u`` (adults are
7.4 heads tall, children 5.6); its height on the canvas encodes ``height`` (short/average/tall, children
smaller still) and its widths encode ``physique`` and ``gender`` (shoulder/hip ratio). Every part is
painted through a :class:`Painter` with *materials* ("skin", "top", "hat", …) that a modality turns into
colours, temperatures or pencil lines (``engine.world.modalities``).

Views: ``front`` (face visible), ``back`` (hair, back of garments, backpack body) and ``side`` (profile,
drawn facing right; the caller may mirror it). ``swing`` in [-1, 1] is the walking phase: arms and legs
swing in opposite directions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from engine.world.identities import pick
from engine.world.modalities import COLOR_RGB, HAIR_RGB, SKIN_RGB, Paint, jitter_color, shade

Point = tuple[float, float]
CANVAS_H, CANVAS_W = 256, 128

#: Figure height as a fraction of the canvas height, by height attribute (adults) — children are smaller.
HEIGHT_FRACTION = {"short": 0.775, "average": 0.855, "tall": 0.93}
CHILD_HEIGHT_FRACTION = {"short": 0.6, "average": 0.68, "tall": 0.74}
SHOULDER_K = {"slim": 0.88, "average": 1.0, "heavy": 1.18}
WAIST_K = {"slim": 0.8, "average": 1.0, "heavy": 1.55}
HIP_K = {"slim": 0.86, "average": 1.0, "heavy": 1.3}
LIMB_K = {"slim": 0.78, "average": 1.0, "heavy": 1.4}

_SHOE_COLORS = {
    "sneakers": {"white": 0.34, "black": 0.24, "gray": 0.14, "blue": 0.1, "red": 0.08, "pink": 0.05, "green": 0.05},
    "boots": {"black": 0.45, "brown": 0.4, "beige": 0.15},
    "sandals": {"brown": 0.45, "black": 0.3, "beige": 0.25},
    "leather_shoes": {"black": 0.6, "brown": 0.4},
    "high_heels": {"black": 0.4, "red": 0.25, "beige": 0.2, "white": 0.1, "pink": 0.05},
    "slippers": {"pink": 0.25, "gray": 0.25, "blue": 0.2, "white": 0.15, "brown": 0.15},
}


def _mix(a: tuple[float, ...], b: tuple[float, ...], t: float) -> tuple[float, ...]:
    return tuple(x * (1 - t) + y * t for x, y in zip(a, b, strict=True))


def _lum(rgb: tuple[float, ...]) -> float:
    return 0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]


@dataclass(frozen=True)
class Look:
    """Appearance details that are not attributes but must stay fixed for a person (and an outfit)."""

    skin_rgb: tuple[float, ...]
    hair_rgb: tuple[float, ...]
    lips_rgb: tuple[float, ...]
    beard: bool
    body_heat: float
    shoulder_k: float
    head_k: float
    hair_part: int
    top_rgb: tuple[float, ...]
    bottom_rgb: tuple[float, ...]
    shoe_rgb: tuple[float, ...]
    sole_rgb: tuple[float, ...]
    hat_rgb: tuple[float, ...] | None
    carry_rgb: tuple[float, ...] | None
    inner_rgb: tuple[float, ...]
    accent_rgb: tuple[float, ...]
    stitch_rgb: tuple[float, ...]
    umbrella_open: bool
    carry_side: int
    pompom: bool
    belt: bool


def make_look(attrs: dict[str, str], person_rng: np.random.Generator, outfit_rng: np.random.Generator) -> Look:
    """Draw a look: body details from ``person_rng`` (same for all outfits), clothing details from ``outfit_rng``."""
    skin = jitter_color(SKIN_RGB[attrs["skin_color"]], person_rng, 0.05)
    hair = jitter_color(HAIR_RGB[attrs["hair_color"]], person_rng, 0.06)
    female = attrs["gender"] == "female"
    lips = _mix(skin, (196.0, 62.0, 86.0), 0.55) if female else shade(skin, 0.78)
    beard = (not female) and attrs["age"] != "child" and person_rng.random() < 0.28
    body_heat = float(person_rng.uniform(-8, 8))
    shoulder_k = float(person_rng.uniform(0.96, 1.04))
    head_k = float(person_rng.uniform(0.97, 1.03))
    hair_part = 1 if person_rng.random() < 0.5 else -1

    r = outfit_rng
    top = jitter_color(COLOR_RGB[attrs["top_color"]], r)
    bottom = jitter_color(COLOR_RGB[attrs["bottom_color"]], r)
    shoe_name = pick(r, _SHOE_COLORS[attrs["shoe_type"]])
    shoe = jitter_color(COLOR_RGB[shoe_name], r)
    if attrs["shoe_type"] == "sneakers":
        sole = (238.0, 238.0, 234.0) if r.random() < 0.9 else (186.0, 146.0, 96.0)
    else:
        sole = shade(shoe, 0.45) if _lum(shoe) > 60 else (58.0, 54.0, 50.0)
    hat = jitter_color(COLOR_RGB[attrs["hat_color"]], r) if "hat_color" in attrs else None
    carry = jitter_color(COLOR_RGB[attrs["carrying_color"]], r) if "carrying_color" in attrs else None
    inner = (44.0, 44.0, 48.0) if _lum(top) > 140 else (228.0, 228.0, 224.0)
    if attrs["top_type"] == "shirt":
        accent = (236.0, 236.0, 230.0) if _lum(top) < 150 else (60.0, 60.0, 64.0)
    else:
        accent = (70.0, 46.0, 30.0) if _lum(top) > 90 else (170.0, 170.0, 170.0)
    if attrs["bottom_type"] == "jeans":
        stitch = (206.0, 156.0, 82.0)
    else:
        stitch = shade(bottom, 1.4) if _lum(bottom) < 60 else shade(bottom, 0.7)
    return Look(skin, hair, lips, beard, body_heat, shoulder_k, head_k, hair_part, top, bottom, shoe, sole, hat,
                carry, inner, accent, stitch, umbrella_open=bool(r.random() < 0.35),
                carry_side=1 if r.random() < 0.5 else -1, pompom=bool(r.random() < 0.45),
                belt=bool(r.random() < 0.5))


class Painter:
    """Anti-aliased cv2 drawing of materials on one canvas (sub-pixel coordinates, shift 4)."""

    SHIFT = 4
    SCALE = 16.0

    def __init__(self, canvas: np.ndarray, materials: dict[str, Paint | None], edge_width: int = 1):
        self.canvas = canvas
        self.m = materials
        self.ew = edge_width

    def _pts(self, pts) -> np.ndarray:
        return (np.array(pts, dtype=np.float64) * self.SCALE + 0.5).astype(np.int32)

    def poly(self, mat: str, pts, edge: bool = True) -> None:
        p = self.m.get(mat)
        if p is None:
            return
        arr = self._pts(pts)
        cv2.fillPoly(self.canvas, [arr], p.fill, cv2.LINE_AA, self.SHIFT)
        if edge and p.edge is not None:
            cv2.polylines(self.canvas, [arr], True, p.edge, self.ew, cv2.LINE_AA, self.SHIFT)

    def outline(self, mat: str, pts, closed: bool = False) -> None:
        """The edge colour of ``mat`` along a path (no fill)."""
        p = self.m.get(mat)
        if p is None or p.edge is None:
            return
        cv2.polylines(self.canvas, [self._pts(pts)], closed, p.edge, self.ew, cv2.LINE_AA, self.SHIFT)

    def line(self, mat: str, pts, width: float = 1.0, closed: bool = False) -> None:
        """A stroke in the fill colour of ``mat`` (seams, laces, straps, facial lines)."""
        p = self.m.get(mat)
        if p is None:
            return
        cv2.polylines(self.canvas, [self._pts(pts)], closed, p.fill, max(1, int(round(width))), cv2.LINE_AA,
                      self.SHIFT)

    def ellipse(self, mat: str, c: Point, axes: tuple[float, float], angle: float = 0.0, edge: bool = True) -> None:
        p = self.m.get(mat)
        if p is None:
            return
        center = (int(round(c[0] * self.SCALE)), int(round(c[1] * self.SCALE)))
        ax = (max(1, int(round(axes[0] * self.SCALE))), max(1, int(round(axes[1] * self.SCALE))))
        cv2.ellipse(self.canvas, center, ax, angle, 0, 360, p.fill, -1, cv2.LINE_AA, self.SHIFT)
        if edge and p.edge is not None:
            cv2.ellipse(self.canvas, center, ax, angle, 0, 360, p.edge, self.ew, cv2.LINE_AA, self.SHIFT)

    def circle(self, mat: str, c: Point, r: float, edge: bool = True) -> None:
        self.ellipse(mat, c, (r, r), 0.0, edge)

    def tube(self, mat: str, pts: list[Point], widths: list[float], cap_start: bool = False,
             cap_end: bool = True) -> tuple[list[Point], list[Point]]:
        """A limb or garment tube along a joint chain: filled, outlined along its sides (and chosen caps)."""
        left, right = tube_sides(pts, widths)
        p = self.m.get(mat)
        if p is None:
            return left, right
        arr = self._pts(left + right[::-1])
        cv2.fillPoly(self.canvas, [arr], p.fill, cv2.LINE_AA, self.SHIFT)
        if p.edge is not None:
            paths = [self._pts(left), self._pts(right)]
            if cap_start:
                paths.append(self._pts([left[0], right[0]]))
            if cap_end:
                paths.append(self._pts([left[-1], right[-1]]))
            cv2.polylines(self.canvas, paths, False, p.edge, self.ew, cv2.LINE_AA, self.SHIFT)
        return left, right

    def blend_poly(self, mat: str, pts, alpha: float, edge: bool = True) -> None:
        """A translucent polygon (plastic bag, ground shadow): drawn on a copy and mixed by ``alpha``."""
        p = self.m.get(mat)
        if p is None:
            return
        arr = np.asarray(pts, dtype=np.float64)
        h, w = self.canvas.shape[:2]
        x0, y0 = max(0, int(arr[:, 0].min()) - 2), max(0, int(arr[:, 1].min()) - 2)
        x1, y1 = min(w, int(arr[:, 0].max()) + 3), min(h, int(arr[:, 1].max()) + 3)
        if x1 <= x0 or y1 <= y0:
            return
        roi = self.canvas[y0:y1, x0:x1]
        layer = roi.copy()
        shifted = np.round((arr - (x0, y0)) * self.SCALE).astype(np.int32)
        cv2.fillPoly(layer, [shifted], p.fill, cv2.LINE_AA, self.SHIFT)
        cv2.addWeighted(layer, alpha, roi, 1.0 - alpha, 0.0, dst=roi)
        if edge and p.edge is not None:
            cv2.polylines(roi, [shifted], True, p.edge, self.ew, cv2.LINE_AA, self.SHIFT)


def tube_sides(pts: list[Point], widths: list[float]) -> tuple[list[Point], list[Point]]:
    """Offset a chain of points by half-widths on both sides (normals averaged at inner joints)."""
    n = len(pts)
    dirs = []
    for i in range(n - 1):
        dx, dy = pts[i + 1][0] - pts[i][0], pts[i + 1][1] - pts[i][1]
        d = math.hypot(dx, dy) or 1.0
        dirs.append((dx / d, dy / d))
    left, right = [], []
    for i in range(n):
        if i == 0:
            dx, dy = dirs[0]
        elif i == n - 1:
            dx, dy = dirs[-1]
        else:
            dx, dy = dirs[i - 1][0] + dirs[i][0], dirs[i - 1][1] + dirs[i][1]
            d = math.hypot(dx, dy) or 1.0
            dx, dy = dx / d, dy / d
        nx, ny = -dy, dx
        w = widths[i]
        left.append((pts[i][0] + nx * w, pts[i][1] + ny * w))
        right.append((pts[i][0] - nx * w, pts[i][1] - ny * w))
    return left, right


def arc(cx: float, cy: float, ax: float, ay: float, a0: float, a1: float, n: int = 10) -> list[Point]:
    """Points on an ellipse from angle ``a0`` to ``a1`` (degrees; 0 = +x, 90 = down)."""
    out = []
    for i in range(n):
        t = math.radians(a0 + (a1 - a0) * i / (n - 1))
        out.append((cx + ax * math.cos(t), cy + ay * math.sin(t)))
    return out


def cut_chain(pts: list[Point], widths: list[float], t: float) -> tuple[list[Point], list[float]]:
    """The first fraction ``t`` (by length) of a joint chain, widths interpolated."""
    lengths = [math.dist(pts[i], pts[i + 1]) for i in range(len(pts) - 1)]
    target = max(0.0, min(1.0, t)) * sum(lengths)
    out_p, out_w = [pts[0]], [widths[0]]
    for i, seg in enumerate(lengths):
        if target <= seg:
            f = target / seg if seg else 0.0
            out_p.append((pts[i][0] + (pts[i + 1][0] - pts[i][0]) * f, pts[i][1] + (pts[i + 1][1] - pts[i][1]) * f))
            out_w.append(widths[i] + (widths[i + 1] - widths[i]) * f)
            return out_p, out_w
        target -= seg
        out_p.append(pts[i + 1])
        out_w.append(widths[i + 1])
    return out_p, out_w


def point_at(pts: list[Point], t: float) -> Point:
    p, _ = cut_chain(pts, [0.0] * len(pts), t)
    return p[-1]


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
            self._draw_side(p)
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
            self._backpack_behind(p)
        self._hair_behind(p)
        if a["hat_type"] == "hood":
            self._hood_behind(p)
        if self.carry == "suitcase":
            self._suitcase_front(p)
        for s in (-1, 1):
            pts, ws, _ = self.legs[s]
            p.tube("skin", pts, ws)
        self._bottom_front(p)
        self._shoes_front(p)
        self._neck(p)
        self._torso_front(p)
        self._arms_front(p)
        if a["hairstyle"] == "long" and front and a["hat_type"] != "hood":
            self._long_hair_front_locks(p)
        if not front:
            self._hair_back_view_long(p)
        self._head_front_back(p)
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

    def _top_hem(self) -> float:
        t = self.a["top_type"]
        u = self.u
        if t == "coat":
            return self.knee_y + (0.0 if self.female else -0.1 * u)
        if t == "dress":
            return self._skirt_hem(self.a["bottom_length"])
        if t == "jacket":
            return self.crotch - 0.05 * u
        if t in ("shirt", "blouse"):
            return self.crotch - 0.12 * u
        return self.crotch - 0.18 * u

    def _skirt_hem(self, length: str) -> float:
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
        hem = self._top_hem()
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
        getattr(self, f"_detail_{t}")(p, front, hem)

    def _skin_shoulders(self, p: Painter) -> None:
        u = self.u
        pts = self._torso_points(self.ys + 0.9 * u, 0.2 * u)
        p.poly("skin", pts)

    # top details (front and back) --------------------------------------------------------------
    def _hem_band(self, p: Painter, hem: float, height: float, ribs: bool) -> None:
        u, cx = self.u, self.cx
        w = max(self.hp, self.wa) * 1.03
        p.line("top_line", [(cx - w * 0.98, hem - height), (cx + w * 0.98, hem - height)], self.lwpx)
        if ribs:
            step = max(2.5, 0.12 * u)
            x = cx - w + step
            while x < cx + w - 1:
                p.line("top_line", [(x, hem - height + 1), (x, hem - 1)], 1)
                x += step

    def _detail_t_shirt(self, p: Painter, front: bool, hem: float) -> None:
        u, cx = self.u, self.cx
        depth = 0.22 * u if front else 0.08 * u
        p.line("top_line", arc(cx, self.ys - 0.04 * u, 0.3 * u, depth + 0.1 * u, 180, 0, 9)[1:-1], self.lwpx * 1.4)

    def _detail_shirt(self, p: Painter, front: bool, hem: float) -> None:
        u, cx = self.u, self.cx
        if front:
            for s in (-1, 1):
                p.poly("top", [(cx + s * 0.04 * u, self.ys + 0.3 * u), (cx + s * 0.3 * u, self.ys - 0.08 * u),
                               (cx + s * 0.42 * u, self.ys + 0.12 * u), (cx + s * 0.2 * u, self.ys + 0.42 * u)])
            p.line("top_line", [(cx, self.ys + 0.3 * u), (cx, hem)], self.lwpx)
            y = self.ys + 0.55 * u
            while y < hem - 0.15 * u:
                p.circle("top_accent", (cx + 0.07 * u, y), max(0.9, 0.05 * u), edge=False)
                y += 0.42 * u
            pk = cx - self.sh * 0.55
            p.outline("top", [(pk - 0.22 * u, self.ys + 0.6 * u), (pk - 0.22 * u, self.ys + 1.0 * u),
                              (pk + 0.22 * u, self.ys + 1.0 * u), (pk + 0.22 * u, self.ys + 0.6 * u)])
            p.line("top_line", [(pk - 0.22 * u, self.ys + 0.66 * u), (pk + 0.22 * u, self.ys + 0.66 * u)], 1)
        else:
            p.poly("top", [(cx - 0.34 * u, self.ys - 0.06 * u), (cx + 0.34 * u, self.ys - 0.06 * u),
                           (cx + 0.36 * u, self.ys + 0.12 * u), (cx - 0.36 * u, self.ys + 0.12 * u)])
            p.line("top_line", [(cx - self.sh * 0.8, self.ys + 0.55 * u), (cx + self.sh * 0.8, self.ys + 0.55 * u)],
                   self.lwpx)

    def _detail_blouse(self, p: Painter, front: bool, hem: float) -> None:
        u, cx = self.u, self.cx
        if front:
            pts = arc(cx, self.ys - 0.04 * u, 0.26 * u, 0.54 * u, 180, 0, 9)
            for i in range(1, len(pts) - 1):
                p.circle("top", pts[i], 0.09 * u)
            p.line("top_line", [(cx - self.wa * 0.95, self.waist_y + 0.1 * u), (cx + self.wa * 0.95,
                                                                                self.waist_y + 0.1 * u)],
                   self.lwpx)
        for s in (-1, 1):
            y = self.waist_y + 0.2 * u
            p.line("top_line", [(cx + s * self.wa * 0.45, y), (cx + s * self.wa * 0.5, hem - 0.1 * u)], 1)

    def _detail_sweater(self, p: Painter, front: bool, hem: float) -> None:
        u, cx = self.u, self.cx
        depth = 0.2 * u if front else 0.08 * u
        p.line("top_line", arc(cx, self.ys - 0.04 * u, 0.3 * u, depth + 0.12 * u, 180, 0, 9)[1:-1], self.lwpx * 2.2)
        y = self.ys + 0.55 * u
        step = max(3.0, 0.17 * u)
        while y < hem - 0.35 * u:
            w = self.sh * 0.88 if y < self.chest_y else self.wa * 0.95
            p.line("top_line", [(cx - w, y), (cx - w * 0.33, y + 1), (cx + w * 0.33, y), (cx + w, y + 1)], 1)
            y += step
        self._hem_band(p, hem, 0.3 * u, ribs=True)

    def _detail_hoodie(self, p: Painter, front: bool, hem: float) -> None:
        u, cx = self.u, self.cx
        if self.a["hat_type"] != "hood":
            if front:
                pts = arc(cx, self.ys + 0.02 * u, 0.46 * u, 0.3 * u, 180, 0, 11)
                p.line("top_shade", pts, self.lwpx * 2.5)
                p.outline("top", pts)
            else:
                pts = arc(cx, self.ys + 0.05 * u, 0.5 * u, 0.75 * u, 0, 180, 11)
                p.poly("top_shade", pts, edge=False)
                p.outline("top", pts)
        if front:
            for s in (-1, 1):
                x = cx + s * 0.14 * u
                p.line("top_line", [(x, self.ys + 0.2 * u), (x + s * 0.02 * u, self.ys + 0.95 * u)], self.lwpx)
                p.circle("top_accent", (x + s * 0.02 * u, self.ys + 0.98 * u), max(1.0, 0.05 * u), edge=False)
            top, bot = self.waist_y + 0.05 * u, hem - 0.28 * u
            w0, w1 = self.wa * 0.55, self.wa * 0.8
            p.outline("top", [(cx - w1, bot), (cx - w0, top), (cx + w0, top), (cx + w1, bot)])
            p.outline("top", [(cx - w1, bot), (cx + w1, bot)])
        self._hem_band(p, hem, 0.26 * u, ribs=True)

    def _detail_jacket(self, p: Painter, front: bool, hem: float) -> None:
        u, cx = self.u, self.cx
        if front:
            for s in (-1, 1):
                x = cx + s * 0.05 * u
                p.line("metal", [(cx + s * 0.03 * u, self.ys + 0.62 * u), (x, hem)], self.lwpx)
                p.poly("top", [(cx + s * 0.26 * u, self.ys - 0.1 * u), (cx + s * 0.42 * u, self.ys + 0.05 * u),
                               (cx + s * 0.12 * u, self.ys + 0.6 * u), (cx + s * 0.04 * u, self.ys + 0.58 * u)])
                pkx = cx + s * self.wa * 0.6
                p.line("top_line", [(pkx, self.waist_y + 0.15 * u), (pkx + s * 0.18 * u, self.waist_y + 0.6 * u)],
                       self.lwpx)
            p.line("top", [(cx + 0.04 * u, self.ys + 0.62 * u), (cx + 0.04 * u, hem)], 1)
        else:
            p.line("top_line", [(cx - self.sh * 0.85, self.ys + 0.5 * u), (cx + self.sh * 0.85, self.ys + 0.5 * u)],
                   self.lwpx)
        self._hem_band(p, hem, 0.16 * u, ribs=False)

    def _detail_coat(self, p: Painter, front: bool, hem: float) -> None:
        u, cx = self.u, self.cx
        if front:
            for s in (-1, 1):
                p.poly("top", [(cx + s * 0.26 * u, self.ys - 0.1 * u), (cx + s * 0.55 * u, self.ys + 0.1 * u),
                               (cx + s * 0.34 * u, self.ys + 0.55 * u), (cx + s * 0.02 * u, self.ys + 1.0 * u),
                               (cx, self.ys + 0.55 * u)])
            p.line("top_line", [(cx + 0.06 * u, self.ys + 0.6 * u), (cx + 0.06 * u, hem)], self.lwpx)
            for k in range(3):
                y = self.ys + 1.15 * u + k * 0.55 * u
                for s in (-1, 1):
                    p.circle("top_accent", (cx + s * 0.26 * u, y), max(1.0, 0.07 * u))
            if self.look.belt:
                p.poly("top", [(cx - self.wa * 1.02, self.waist_y - 0.08 * u), (cx + self.wa * 1.02,
                                                                                self.waist_y - 0.08 * u),
                               (cx + self.wa * 1.02, self.waist_y + 0.1 * u), (cx - self.wa * 1.02,
                                                                               self.waist_y + 0.1 * u)])
            for s in (-1, 1):
                pkx = cx + s * self.hp * 0.62
                p.line("top_line", [(pkx - 0.2 * u, self.hip_y), (pkx + 0.2 * u, self.hip_y)], self.lwpx)
        else:
            p.line("top_line", [(cx, self.waist_y), (cx, hem)], self.lwpx)
            if self.look.belt:
                p.line("top_line", [(cx - self.wa, self.waist_y), (cx + self.wa, self.waist_y)], self.lwpx * 2)

    def _detail_vest(self, p: Painter, front: bool, hem: float) -> None:
        u, cx = self.u, self.cx
        if front:
            p.line("top_line", arc(cx, self.ys - 0.04 * u, 0.27 * u, 0.5 * u, 180, 0, 9)[1:-1], self.lwpx)
        self._hem_band(p, hem, 0.1 * u, ribs=False)

    def _detail_dress(self, p: Painter, front: bool, hem: float) -> None:
        u, cx = self.u, self.cx
        y = self.waist_y
        p.line("top_line", [(cx - self.wa, y), (cx + self.wa, y)], self.lwpx * 1.5)
        for s in (-1, 1):
            p.line("top_line", [(cx + s * self.wa * 0.4, y + 0.1 * u), (cx + s * self.hp * 0.7, hem - 0.1 * u)], 1)
        if front:
            p.line("top_line", arc(cx, self.ys - 0.04 * u, 0.27 * u, 0.46 * u, 180, 0, 9)[1:-1], self.lwpx)

    def _arms_front(self, p: Painter) -> None:
        length = self.a["top_length"]
        for s in (-1, 1):
            pts, ws = self.arms[s]
            self._arm(p, pts, ws, length, "")

    def _arm(self, p: Painter, pts: list[Point], ws: list[float], length: str, far: str) -> None:
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
    def _bottom_length_t(self, kind: str, length: str) -> float:
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
            hem = self._skirt_hem(length)
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
        t = self._bottom_length_t(kind, length)
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

    # shoes ---------------------------------------------------------------------------------------
    def _shoes_front(self, p: Painter) -> None:
        for s in (-1, 1):
            pts, ws, lift = self.legs[s]
            self._shoe_front(p, pts, ws, lift, s)

    def _shoe_front(self, p: Painter, pts: list[Point], ws: list[float], lift: float, s: int) -> None:
        """Front/back views: the feet turn outwards, so each shoe shows a foreshortened profile."""
        ax, ay = pts[2]
        self._shoe_profile(p, ax - s * 0.05 * self.u, ay, ay + 0.2 * self.u, float(s), 0.5, "", pts[1][1], ws[2])

    # head --------------------------------------------------------------------------------------
    def _head_front_back(self, p: Painter) -> None:
        a, u, cx = self.a, self.u, self.cx
        front = self.pose.view == "front"
        hx, hy, ax, ay = cx, self.head_cy, self.head_ax, self.head_ay
        for s in (-1, 1):
            p.ellipse("skin", (hx + s * ax * 0.98, hy + 0.06 * u), (0.09 * u, 0.15 * u))
        p.ellipse("skin", (hx, hy), (ax, ay))
        hat = a["hat_type"]
        if front:
            if hat == "hood":
                self._hood_rim(p)
            self._face(p)
        if hat != "hood":
            self._hair_top_front_back(p, front)
        if hat != "none":
            getattr(self, f"_hat_{hat}")(p, front)

    def _face(self, p: Painter) -> None:
        a, u, cx = self.a, self.u, self.cx
        hy = self.head_cy
        child = a["age"] == "child"
        ey = hy + 0.02 * u
        ex = 0.16 * u
        er = (0.085 * u if child else 0.075 * u, 0.05 * u)
        for s in (-1, 1):
            p.ellipse("eye_white", (cx + s * ex, ey), er, edge=False)
            p.circle("pupil", (cx + s * ex, ey + 0.005 * u), 0.04 * u, edge=False)
            bw = max(1.0, 0.05 * u)
            p.line("brow", [(cx + s * (ex - 0.09 * u), ey - 0.1 * u), (cx + s * (ex + 0.09 * u), ey - 0.13 * u)], bw)
            if self.female and not child:
                p.line("pupil", [(cx + s * (ex + 0.06 * u), ey - 0.03 * u), (cx + s * (ex + 0.11 * u),
                                                                             ey - 0.07 * u)], 1)
        p.line("skin_line", [(cx, ey + 0.05 * u), (cx + 0.03 * u, ey + 0.2 * u), (cx - 0.03 * u, ey + 0.22 * u)], 1)
        my = ey + 0.33 * u
        if self.look.beard and self.pose.view == "front":
            pts = arc(cx, hy + 0.02 * u, self.head_ax * 0.98, self.head_ay * 0.98, 10, 170, 12)
            inner = arc(cx, my - 0.02 * u, 0.17 * u, 0.08 * u, 170, 10, 8)
            p.poly("hair", pts + inner, edge=False)
        if self.female:
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

    def _hair_behind(self, p: Painter) -> None:
        """Hair mass that lies behind the head and body in the front view (medium/long/ponytail/bun)."""
        a, u, cx = self.a, self.u, self.cx
        style = a["hairstyle"]
        if a["hat_type"] == "hood" or self.pose.view != "front":
            return
        hx, hy, ax, ay = cx, self.head_cy, self.head_ax, self.head_ay
        if style == "medium":
            bottom = self.chin_y + 0.15 * u
            pts = arc(hx, hy, ax * 1.16, ay * 1.08, 180, 360, 12) + [(hx + ax * 1.2, bottom), (hx - ax * 1.2, bottom)]
            p.poly("hair", pts)
        elif style == "long":
            bottom = self.ys + 1.05 * u
            pts = arc(hx, hy, ax * 1.18, ay * 1.08, 180, 360, 12) + [(hx + ax * 1.3, self.ys), (hx + ax * 1.45, bottom),
                                                                   (hx - ax * 1.45, bottom), (hx - ax * 1.3, self.ys)]
            p.poly("hair", pts)
        elif style == "ponytail":
            s = self.look.hair_part
            x0 = hx + s * ax * 0.7
            pts = [(x0, hy), (x0 + s * 0.45 * u, hy + 0.5 * u), (x0 + s * 0.5 * u, self.ys + 0.55 * u),
                   (x0 + s * 0.3 * u, self.ys + 0.75 * u), (x0 + s * 0.15 * u, hy + 0.55 * u)]
            p.poly("hair", pts)
            p.line("hair_line", [(x0 + s * 0.2 * u, hy + 0.35 * u), (x0 + s * 0.4 * u, self.ys + 0.5 * u)], 1)
        elif style == "bun":
            p.circle("hair", (hx, self.top_y - 0.02 * u), 0.27 * u)
            p.line("hair_line", arc(hx, self.top_y - 0.02 * u, 0.17 * u, 0.12 * u, 200, 340, 6), 1)

    def _hair_back_view_long(self, p: Painter) -> None:
        """In the back view long hair and ponytails hang over the back (drawn after the torso)."""
        a, u, cx = self.a, self.u, self.cx
        if a["hat_type"] == "hood":
            return
        hx, hy, ax = cx, self.head_cy, self.head_ax
        style = a["hairstyle"]
        if style == "long":
            bottom = self.ys + 1.15 * u
            pts = [(hx - ax * 1.1, hy), (hx + ax * 1.1, hy), (hx + ax * 1.3, self.ys + 0.2 * u), (hx + ax * 1.2,
                                                                                                  bottom),
                   (hx, bottom + 0.1 * u), (hx - ax * 1.2, bottom), (hx - ax * 1.3, self.ys + 0.2 * u)]
            p.poly("hair", pts)
            for k in (-2, -1, 0, 1, 2):
                x = hx + k * ax * 0.38
                p.line("hair_line", [(x, self.chin_y), (x * 1.0 + k * 0.05 * u, bottom - 0.1 * u)], 1)
        elif style == "ponytail":
            s = self.sw * 0.15 * u
            pts = [(hx - 0.13 * u, hy + 0.3 * u), (hx + 0.13 * u, hy + 0.3 * u), (hx + 0.18 * u + s, self.ys + 0.5 * u),
                   (hx + s, self.ys + 0.95 * u), (hx - 0.18 * u + s, self.ys + 0.5 * u)]
            p.poly("hair", pts)
            p.line("hair_line", [(hx, hy + 0.4 * u), (hx + s, self.ys + 0.85 * u)], 1)

    def _hair_top_front_back(self, p: Painter, front: bool) -> None:
        a, u, cx = self.a, self.u, self.cx
        hx, hy, ax, ay = cx, self.head_cy, self.head_ax, self.head_ay
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
            bottom = {"short": hy + 0.3 * u, "medium": self.chin_y + 0.15 * u, "long": self.chin_y + 0.1 * u,
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
        side_bottom = {"short": hy + 0.05 * u, "medium": self.chin_y - 0.05 * u, "long": self.chin_y,
                       "ponytail": hy - 0.05 * u, "bun": hy - 0.05 * u}[style]
        wide = 1.1 if style in ("medium", "long") else 1.05
        outer = arc(hx, hy, ax * wide, ay * 1.06, 175, 365, 14)
        part = self.look.hair_part
        inner = [(hx + ax * 0.88, side_bottom), (hx + ax * 0.9, fringe + 0.08 * u), (hx + ax * 0.55, fringe),
                 (hx + part * 0.12 * u, fringe - 0.08 * u), (hx - ax * 0.55, fringe), (hx - ax * 0.9,
                                                                                       fringe + 0.08 * u),
                 (hx - ax * 0.88, side_bottom)]
        p.poly("hair", [(hx - ax * wide, side_bottom)] + outer + [(hx + ax * wide, side_bottom)] + inner)
        for k in (-1, 0, 1):
            p.line("hair_line", [(hx + part * 0.12 * u + k * 0.05 * u, fringe - 0.05 * u),
                                 (hx + k * ax * 0.7, hy - ay * 0.9)], 1)
        if style == "short" and self.a["gender"] == "male":
            for s in (-1, 1):
                p.line("hair", [(hx + s * ax * 0.95, fringe + 0.1 * u), (hx + s * ax * 0.93, hy + 0.12 * u)],
                       max(1.0, 0.06 * u))

    def _long_hair_front_locks(self, p: Painter) -> None:
        u, cx = self.u, self.cx
        hx, hy, ax = cx, self.head_cy, self.head_ax
        bottom = self.ys + 0.95 * u
        for s in (-1, 1):
            pts = [(hx + s * ax * 0.85, hy), (hx + s * ax * 1.15, hy), (hx + s * ax * 1.35, self.ys + 0.1 * u),
                   (hx + s * ax * 1.28, bottom), (hx + s * ax * 0.98, bottom - 0.1 * u), (hx + s * ax * 0.9,
                                                                                          self.chin_y)]
            p.poly("hair", pts)
            p.line("hair_line", [(hx + s * ax * 1.05, self.chin_y), (hx + s * ax * 1.15, bottom - 0.15 * u)], 1)

    # hats ---------------------------------------------------------------------------------------
    def _hat_cap(self, p: Painter, front: bool) -> None:
        u, hx, hy, ax, ay = self.u, self.cx, self.head_cy, self.head_ax, self.head_ay
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

    def _hat_beanie(self, p: Painter, front: bool) -> None:
        u, hx, hy, ax, ay = self.u, self.cx, self.head_cy, self.head_ax, self.head_ay
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
        if self.look.pompom:
            p.circle("hat", (hx, base - ay * 1.12 - 0.08 * u), 0.15 * u)

    def _hat_brimmed_hat(self, p: Painter, front: bool) -> None:
        u, hx, hy, ax = self.u, self.cx, self.head_cy, self.head_ax
        base = hy - 0.2 * u
        p.ellipse("hat", (hx, base), (ax * 2.0, 0.17 * u))
        crown = [(hx - ax * 0.95, base), (hx - ax * 0.9, base - 0.4 * u)] + arc(hx, base - 0.4 * u, ax * 0.9,
                                                                                0.18 * u, 180, 360, 8)[1:-1] + \
                [(hx + ax * 0.9, base - 0.4 * u), (hx + ax * 0.95, base)]
        p.poly("hat", crown)
        p.poly("dark", [(hx - ax * 0.95, base - 0.02 * u), (hx - ax * 0.93, base - 0.14 * u),
                        (hx + ax * 0.93, base - 0.14 * u), (hx + ax * 0.95, base - 0.02 * u)], edge=False)
        p.line("hat_line", arc(hx, base, ax * 1.9, 0.12 * u, 0, 180, 12), 1)

    def _hat_helmet(self, p: Painter, front: bool) -> None:
        u, hx, hy, ax, ay = self.u, self.cx, self.head_cy, self.head_ax, self.head_ay
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
                p.line("dark", [(hx + s * ax * 0.95, base + 0.02 * u), (hx + s * ax * 0.4, self.chin_y - 0.02 * u)], 1)

    def _hood_behind(self, p: Painter) -> None:
        u, hx, hy, ax, ay = self.u, self.cx, self.head_cy, self.head_ax, self.head_ay
        body = [(hx - ax * 1.42, hy), (hx + ax * 1.42, hy), (hx + self.sh * 0.75, self.ys + 0.3 * u),
                (hx - self.sh * 0.75, self.ys + 0.3 * u)]
        p.poly("hat", body)
        p.ellipse("hat", (hx, hy - 0.04 * u), (ax * 1.42, ay * 1.2))
        if self.pose.view == "back":
            p.line("hat_line", [(hx, hy - ay * 1.15), (hx, self.ys + 0.2 * u)], self.lwpx)

    def _hood_rim(self, p: Painter) -> None:
        u, hx, hy, ax, ay = self.u, self.cx, self.head_cy, self.head_ax, self.head_ay
        rim = arc(hx, hy + 0.02 * u, ax * 1.08, ay * 1.06, 0, 360, 24)
        p.line("hat_shade", rim, max(2.0, 0.14 * u), closed=True)
        p.outline("hat", arc(hx, hy + 0.02 * u, ax * 1.2, ay * 1.15, 0, 360, 24), closed=True)
        p.line("hair", arc(hx, hy - 0.05 * u, ax * 0.8, ay * 0.85, 200, 340, 8), max(1.5, 0.1 * u))
        if self.a["top_type"] == "hoodie":
            for s in (-1, 1):
                x = hx + s * 0.16 * u
                p.line("top_line", [(x, self.chin_y), (x + s * 0.02 * u, self.ys + 0.9 * u)], self.lwpx)

    def _hat_hood(self, p: Painter, front: bool) -> None:
        """The hood's back and rim are drawn with the head (see ``_hood_behind``, ``_hood_rim``)."""
        if not front:
            u, hx, hy, ax, ay = self.u, self.cx, self.head_cy, self.head_ax, self.head_ay
            p.ellipse("hat", (hx, hy - 0.04 * u), (ax * 1.4, ay * 1.18))
            p.line("hat_line", [(hx, hy - ay * 1.15), (hx, hy + ay)], self.lwpx)

    # carried items (front and back) ------------------------------------------------------------
    def _backpack_behind(self, p: Painter) -> None:
        u, cx = self.u, self.cx
        w = self.sh * 1.08
        pts = [(cx - w * 0.8, self.ys - 0.12 * u), (cx + w * 0.8, self.ys - 0.12 * u), (cx + w, self.ys + 0.3 * u),
               (cx + w, self.waist_y + 0.3 * u), (cx - w, self.waist_y + 0.3 * u), (cx - w, self.ys + 0.3 * u)]
        p.poly("carry", pts)
        p.line("carry_shade", arc(cx, self.ys - 0.12 * u, 0.25 * u, 0.2 * u, 180, 360, 7), max(1.5, 0.07 * u))

    def _carry_front(self, p: Painter) -> None:
        kind = self.carry
        if kind == "none":
            return
        getattr(self, f"_carry_{kind}")(p)

    def _carry_backpack(self, p: Painter) -> None:
        u, cx = self.u, self.cx
        if self.pose.view == "front":
            for s in (-1, 1):
                x0 = cx + s * self.sh * 0.55
                pts = [(x0, self.ys + 0.02 * u), (x0 + s * 0.02 * u, self.ys + 0.7 * u),
                       (cx + s * self.sh * 0.68, self.waist_y + 0.1 * u)]
                p.tube("carry", pts, [0.1 * u, 0.1 * u, 0.09 * u], cap_start=False)
            y = self.ys + 0.75 * u
            p.line("carry_shade", [(cx - self.sh * 0.5, y), (cx + self.sh * 0.5, y)], max(1.5, 0.06 * u))
            p.poly("dark", [(cx - 0.07 * u, y - 0.06 * u), (cx + 0.07 * u, y - 0.06 * u),
                            (cx + 0.07 * u, y + 0.06 * u), (cx - 0.07 * u, y + 0.06 * u)], edge=False)
            return
        w = self.sh * 0.85
        top, bot = self.ys + 0.05 * u, self.waist_y + 0.35 * u
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

    def _carry_shoulder_bag(self, p: Painter) -> None:
        u, cx, s = self.u, self.cx, self.side
        bag_c = (cx + s * (self.hp + 0.25 * u), self.hip_y + 0.05 * u)
        start = (cx - s * self.sh * 0.5, self.ys + 0.02 * u)
        p.line("carry_shade", [start, (bag_c[0] - s * 0.1 * u, bag_c[1] - 0.35 * u)], max(2.0, 0.09 * u))
        bw, bh = 0.48 * u, 0.38 * u
        body = [(bag_c[0] - bw, bag_c[1] - bh), (bag_c[0] + bw, bag_c[1] - bh), (bag_c[0] + bw * 1.02, bag_c[1] + bh),
                (bag_c[0] - bw * 1.02, bag_c[1] + bh)]
        p.poly("carry", body)
        flap = [(bag_c[0] - bw, bag_c[1] - bh), (bag_c[0] + bw, bag_c[1] - bh), (bag_c[0] + bw, bag_c[1] + 0.05 * u),
                (bag_c[0], bag_c[1] + 0.15 * u), (bag_c[0] - bw, bag_c[1] + 0.05 * u)]
        p.poly("carry", flap)
        p.circle("metal", (bag_c[0], bag_c[1] + 0.1 * u), max(1.0, 0.06 * u))

    def _hand_point(self) -> Point:
        pts, _ = self.arms[self.side if self.pose.view != "side" else 1]
        w, e = pts[2], pts[1]
        d = (w[0] - e[0], w[1] - e[1])
        n = math.hypot(*d) or 1.0
        return (w[0] + d[0] / n * 0.2 * self.u, w[1] + d[1] / n * 0.2 * self.u)

    def _carry_handbag(self, p: Painter) -> None:
        u = self.u
        hx, hy = self._hand_point()
        top = hy + 0.3 * u
        bw, bh = 0.42 * u, 0.6 * u
        p.line("carry_shade", arc(hx, top, bw * 0.6, 0.42 * u, 180, 360, 9), max(1.5, 0.07 * u))
        body = [(hx - bw * 0.85, top), (hx + bw * 0.85, top), (hx + bw, top + bh), (hx - bw, top + bh)]
        p.poly("carry", body)
        p.line("carry_line", [(hx - bw * 0.85, top + 0.15 * u), (hx + bw * 0.85, top + 0.15 * u)], 1)
        p.circle("metal", (hx, top + 0.15 * u), max(1.0, 0.05 * u))

    def _carry_plastic_bag(self, p: Painter) -> None:
        u = self.u
        hx, hy = self._hand_point()
        top = hy + 0.2 * u
        for s in (-1, 1):
            p.line("carry_line", [(hx, hy), (hx + s * 0.25 * u, top + 0.1 * u)], 1)
        body = [(hx - 0.3 * u, top), (hx - 0.2 * u, top + 0.1 * u), (hx + 0.2 * u, top + 0.1 * u), (hx + 0.3 * u, top),
                (hx + 0.45 * u, top + 0.5 * u), (hx + 0.42 * u, top + 1.0 * u), (hx, top + 1.08 * u),
                (hx - 0.42 * u, top + 1.0 * u), (hx - 0.45 * u, top + 0.5 * u)]
        p.blend_poly("carry", body, 0.82)
        for k in (-1, 1):
            p.line("carry_line", [(hx + k * 0.15 * u, top + 0.25 * u), (hx + k * 0.22 * u, top + 0.75 * u)], 1)

    def _carry_umbrella(self, p: Painter) -> None:
        u = self.u
        hx, hy = self._hand_point()
        if self.look.umbrella_open:
            # an open canopy held over the shoulder, tilted outwards so the head stays visible
            d = self.side if self.pose.view != "side" else 1
            tilt = math.radians(30) * d
            c, sn = math.cos(tilt), math.sin(tilt)
            centre = (self.cx + d * 1.3 * u, self.top_y + 0.5 * u)

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
        bottom = min(self.gy - 0.3 * u, hy + 2.6 * u)
        pts = [(hx - 0.04 * u, hy + 0.15 * u), (hx + 0.04 * u, hy + 0.15 * u), (hx + 0.13 * u, hy + 0.6 * u),
               (hx + 0.02 * u, bottom), (hx - 0.02 * u, bottom), (hx - 0.13 * u, hy + 0.6 * u)]
        p.poly("carry", pts)
        p.line("carry_line", [(hx - 0.12 * u, hy + 0.8 * u), (hx + 0.12 * u, hy + 0.8 * u)], 1)
        p.line("metal", [(hx, bottom), (hx, bottom + 0.2 * u)], 1)

    def _suitcase_front(self, p: Painter) -> None:
        u, s = self.u, self.side
        hx, hy = self._hand_point()
        cx = hx + s * 0.15 * u
        top = min(self.gy - 2.1 * u, hy + 0.5 * u)
        bw = 0.62 * u
        for k in (-1, 1):
            p.line("metal", [(hx + k * 0.15 * u, hy), (cx + k * 0.15 * u, top)], max(1.0, 0.05 * u))
        p.line("dark", [(hx - 0.18 * u, hy), (hx + 0.18 * u, hy)], max(2.0, 0.08 * u))
        body = [(cx - bw, top), (cx + bw, top), (cx + bw, self.gy - 0.15 * u), (cx - bw, self.gy - 0.15 * u)]
        p.poly("carry", body)
        p.poly("carry_shade", [(cx + bw * 0.55, top + 1), (cx + bw - 1, top + 1), (cx + bw - 1, self.gy - 0.16 * u),
                               (cx + bw * 0.55, self.gy - 0.16 * u)], edge=False)
        for k in (-1, 0, 1):
            p.line("carry_line", [(cx + k * bw * 0.45, top + 0.15 * u), (cx + k * bw * 0.45, self.gy - 0.3 * u)], 1)
        for k in (-1, 1):
            p.circle("dark", (cx + k * bw * 0.7, self.gy - 0.08 * u), 0.08 * u)

    def _carry_suitcase(self, p: Painter) -> None:
        """Drawn before the body (``_suitcase_front``); nothing to add on top."""

    # ------------------------------------------------------------------------------------------- side
    def _draw_side(self, p: Painter) -> None:
        a = self.a
        # far limbs first
        far_pts, far_ws = self.arms[-1]
        self._arm(p, far_pts, far_ws, a["top_length"], "_far")
        self._leg_side(p, -1)
        if self.carry == "suitcase":
            self._suitcase_side(p)
        self._leg_side(p, 1)
        if a["bottom_type"] == "skirt" and a["top_type"] != "dress":
            self._skirt_side(p)
        else:
            self._pelvis_side(p)
        self._neck_side(p)
        self._hair_side_back(p)
        self._torso_side(p)
        if self.carry == "backpack":
            self._backpack_side(p)
        if self.carry == "shoulder_bag":
            self._shoulder_bag_side(p)
        near_pts, near_ws = self.arms[1]
        self._arm(p, near_pts, near_ws, a["top_length"], "")
        self._head_side(p)
        if self.carry in ("handbag", "plastic_bag", "umbrella"):
            getattr(self, f"_carry_{self.carry}")(p)

    def _leg_side(self, p: Painter, s: int) -> None:
        a, u = self.a, self.u
        far = "_far" if s == -1 else ""
        pts, ws, lift = self.legs[s]
        p.tube("skin" + far, pts, ws)
        kind, length = a["bottom_type"], a["bottom_length"]
        if kind != "skirt" and a["top_type"] != "dress":
            loose = {"trousers": 1.14, "jeans": 1.08, "shorts": 1.3, "leggings": 1.0}[kind]
            t = self._bottom_length_t(kind, length)
            cpts, cws = cut_chain(pts, [w * loose for w in ws], t)
            if t >= 1.0:
                cws[-1] = max(cws[-1], 0.16 * u * self.lw ** 0.5) * (1.0 if kind == "leggings" else 1.15)
            p.tube("bottom" + far, cpts, cws)
            if kind == "jeans":
                left, right = tube_sides(cpts, [w * 0.8 for w in cws])
                p.line("bottom_line", left[1:], 1)
        self._shoe_side(p, pts, ws, s)

    def _shoe_side(self, p: Painter, pts: list[Point], ws: list[float], s: int) -> None:
        ax, ay = pts[2]
        self._shoe_profile(p, ax, ay, ay + 0.2 * self.u, 1.0, 1.0, "_far" if s == -1 else "", pts[1][1], ws[2])

    def _shoe_profile(self, p: Painter, ax: float, ay: float, g: float, direction: float, k: float, far: str,
                      knee_y: float, ankle_w: float) -> None:
        """A shoe seen from the side, toes towards ``direction``; ``k`` < 1 foreshortens it (front/back views)."""
        u = self.u
        kind = self.a["shoe_type"]
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

    def _pelvis_side(self, p: Painter) -> None:
        a, u, cx = self.a, self.u, self.cx
        if a["top_type"] == "dress":
            return
        front = self.d_front * (1.3 if a["physique"] == "heavy" else 1.0)
        back = self.d_back * (1.2 if self.female else 1.08)
        pts = [(cx - self.d_back, self.waist_y), (cx + front, self.waist_y), (cx + front * 1.02, self.hip_y),
               (cx + self.legs[1][1][0] * 0.9, self.crotch), (cx - back * 0.8, self.crotch),  # thigh width
               (cx - back, self.hip_y)]
        p.poly("bottom", pts, edge=False)
        p.outline("bottom", [pts[5], pts[0], pts[1], pts[2]])
        if a["bottom_type"] == "jeans":
            p.line("bottom_line", arc(cx + front * 0.6, self.waist_y, front * 0.5, 0.4 * u, 90, 180, 5), 1)
            p.outline("bottom", [(cx - back * 0.9, self.waist_y + 0.3 * u), (cx - back * 0.55,
                                                                             self.waist_y + 0.75 * u)])
        elif a["bottom_type"] == "trousers" and self.look.belt:
            p.line("dark", [(cx - self.d_back, self.waist_y + 0.07 * u), (cx + front, self.waist_y + 0.07 * u)],
                   max(2.0, 0.12 * u))

    def _skirt_side(self, p: Painter) -> None:
        u, cx = self.u, self.cx
        hem = self._skirt_hem(self.a["bottom_length"])
        spread = 0.35 * u + (hem - self.hip_y) * 0.2
        pts = [(cx - self.d_back, self.waist_y), (cx + self.d_front, self.waist_y), (cx + self.d_front * 1.1,
                                                                                     self.hip_y),
               (cx + spread + 0.1 * u * self.sw, hem), (cx - spread + 0.1 * u * self.sw, hem),
               (cx - self.d_back * 1.2, self.hip_y)]
        p.poly("bottom", pts)
        p.line("bottom_line", [(cx, self.hip_y), (cx + 0.1 * u * self.sw, hem - 0.05 * u)], 1)

    def _neck_side(self, p: Painter) -> None:
        u, cx = self.u, self.cx + self.lean
        pts = [(cx - 0.15 * u, self.chin_y - 0.35 * u), (cx + 0.16 * u, self.chin_y - 0.2 * u),
               (cx + 0.16 * u - self.lean * 0.4, self.ys + 0.2 * u), (cx - 0.2 * u - self.lean * 0.4,
                                                                      self.ys + 0.2 * u)]
        p.poly("skin", pts)

    def _torso_side(self, p: Painter) -> None:
        a, u, cx = self.a, self.u, self.cx
        t = a["top_type"]
        hem = self._top_hem()
        lean = self.lean
        chest = self.d_front * (1.3 if self.female else 1.08)
        belly = self.d_front * (1.35 if a["physique"] == "heavy" else 0.95)
        back_hip = self.d_back * (1.2 if self.female else 1.05)
        flare = {"coat": 0.12, "dress": 0.16}.get(t, 0.0)
        def at(y: float) -> float:
            return lean * max(0.0, (self.waist_y - y) / (self.waist_y - self.ys))
        front = [(cx + 0.12 * u + at(self.ys), self.ys - 0.02 * u), (cx + chest * 0.9 + at(self.ys + 0.4 * u),
                                                                     self.ys + 0.4 * u),
                 (cx + chest + at(self.chest_y), self.chest_y), (cx + belly, self.waist_y), (cx + belly * 1.02,
                                                                                             self.hip_y)]
        back = [(cx - self.d_back * 1.05, self.hip_y), (cx - self.d_back * 0.95, self.waist_y),
                (cx - self.d_back * 1.05 + at(self.chest_y) * 0.7, self.chest_y),
                (cx - self.d_back * 0.95 + at(self.ys + 0.4 * u) * 0.9, self.ys + 0.3 * u),
                (cx - 0.18 * u + at(self.ys), self.ys - 0.05 * u)]
        if t in ("vest",) or a["top_length"] == "sleeveless":
            p.poly("skin", [back[-1], front[0], front[1], back[-2]])
        front = [q for q in front if q[1] < hem]
        back = [q for q in back if q[1] < hem]
        extra = max(0.0, hem - self.hip_y) * flare
        front.append((cx + belly * 1.02 + extra, hem))
        back.insert(0, (cx - back_hip - extra, hem))
        if t == "vest":
            front[0] = (front[0][0] - 0.1 * u, front[0][1] + 0.25 * u)
            back[-1] = (back[-1][0] + 0.1 * u, back[-1][1] + 0.25 * u)
        pts = front + back
        p.poly("top", pts)
        p.poly("top_shade", [(cx - self.d_back * 0.9, self.chest_y), (cx - self.d_back * 0.5, self.chest_y),
                             (cx - self.d_back * 0.5, hem - 0.1 * u), (cx - self.d_back * 0.9,
                                                                       hem - 0.1 * u)], edge=False)
        if t in ("sweater", "hoodie"):
            p.line("top_line", [(back[0][0] + 1, hem - 0.26 * u), (front[-1][0] - 1, hem - 0.26 * u)], self.lwpx)
        if t == "sweater":
            y = self.ys + 0.6 * u
            while y < hem - 0.4 * u:
                p.line("top_line", [(cx - self.d_back * 0.8, y), (cx + self.d_front * 0.8, y)], 1)
                y += max(3.0, 0.17 * u)
        if t == "hoodie" and a["hat_type"] != "hood":
            p.poly("top_shade", [(cx - 0.5 * u, self.ys - 0.05 * u), (cx - 0.1 * u, self.ys - 0.05 * u),
                                 (cx - 0.25 * u, self.ys + 0.55 * u), (cx - self.d_back * 1.1, self.ys + 0.4 * u)])
        if t in ("shirt", "jacket", "coat"):
            p.poly("top", [(front[0][0] - 0.05 * u, self.ys - 0.12 * u), (front[0][0] + 0.06 * u, self.ys + 0.12 * u),
                           (front[0][0] - 0.3 * u, self.ys + 0.05 * u), (front[0][0] - 0.3 * u, self.ys - 0.1 * u)])
        if t in ("jacket", "coat"):
            p.line("top_line", [(cx + chest * 0.55, self.ys + 0.3 * u), (cx + belly * 0.9, hem)], self.lwpx)
        if t == "dress" or (t == "coat" and self.look.belt):
            p.line("top_line", [(cx - self.d_back, self.waist_y), (cx + belly, self.waist_y)], self.lwpx * 1.5)

    def _head_side(self, p: Painter) -> None:
        a, u = self.a, self.u
        hx = self.cx + 0.06 * u + self.lean
        hy = self.head_cy + self.lean * 0.3
        ax, ay = self.head_ax * 1.12, self.head_ay
        hat = a["hat_type"]
        if hat == "hood":
            p.poly("hat", [(hx - 0.1 * u, hy + 0.4 * u), (hx - 0.2 * u, self.ys + 0.2 * u), (hx - 0.8 * u,
                                                                                             self.ys + 0.3 * u),
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
        if self.female:
            p.ellipse("lips", (fx - 0.04 * u, hy + 0.33 * u), (0.05 * u, 0.035 * u), edge=False)
        else:
            p.line("mouth", [(fx - 0.12 * u, hy + 0.34 * u), (fx - 0.01 * u, hy + 0.33 * u)], 1)
        if self.look.beard:
            p.poly("hair", arc(hx, hy, ax, ay, 20, 80, 6) + [(hx + ax * 0.7, hy + 0.3 * u), (hx + 0.1 * u,
                                                                                             hy + 0.25 * u)],
                   edge=False)
        if hat != "hood":
            p.ellipse("skin", (hx - 0.08 * u, hy + 0.05 * u), (0.1 * u, 0.15 * u))
            self._hair_side(p, hx, hy, ax, ay)
        if a["age"] == "elderly":
            p.line("skin_line", [(fx - 0.12 * u, ey + 0.2 * u), (fx - 0.06 * u, ey + 0.32 * u)], 1)
        if hat != "none" and hat != "hood":
            getattr(self, f"_hat_side_{hat}")(p, hx, hy, ax, ay)
        elif hat == "hood":
            hood = arc(hx - 0.08 * u, hy - 0.04 * u, ax * 1.18, ay * 1.16, 95, 300, 16)
            opening = arc(hx + ax * 0.3, hy + 0.02 * u, ax * 0.35, ay * 0.95, 300, 95, 8)
            p.poly("hat", hood + opening)
            p.line("hat_shade", opening[1:-1], max(2.0, 0.12 * u))

    def _hair_side(self, p: Painter, hx: float, hy: float, ax: float, ay: float) -> None:
        u = self.u
        style = self.a["hairstyle"]
        if style == "bald":
            p.poly("hair", arc(hx, hy, ax * 1.0, ay * 0.98, 120, 185, 7) + [(hx - 0.2 * u, hy + 0.05 * u)], edge=False)
            if self.a["hat_type"] == "none":
                p.ellipse("highlight", (hx, hy - ay * 0.65), (ax * 0.3, ay * 0.1), edge=False)
            return
        bottom = {"short": hy + 0.25 * u, "medium": self.chin_y + 0.1 * u, "long": self.chin_y,
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
            s = self.sw * 0.12 * u
            p.poly("hair", [(hx - ax * 0.9, hy - 0.15 * u), (hx - ax * 1.25, hy), (hx - ax * 1.3 - s,
                                                                                   self.ys + 0.6 * u),
                            (hx - ax * 1.05 - s, self.ys + 0.3 * u), (hx - ax * 0.9, hy + 0.1 * u)])
            p.circle("dark", (hx - ax * 1.0, hy - 0.05 * u), 0.07 * u, edge=False)

    def _hair_side_back(self, p: Painter) -> None:
        """Long hair behind the neck and back in the side view."""
        if self.a["hairstyle"] != "long" or self.a["hat_type"] == "hood":
            return
        u = self.u
        hx = self.cx + 0.06 * u + self.lean
        hy = self.head_cy
        ax = self.head_ax * 1.12
        pts = [(hx - ax * 0.2, hy), (hx - ax * 1.12, hy), (hx - ax * 1.2, self.ys + 0.3 * u),
               (hx - ax * 1.0, self.ys + 1.1 * u), (hx - ax * 0.35, self.ys + 1.05 * u), (hx - ax * 0.1, self.ys)]
        p.poly("hair", pts)

    def _hat_side_cap(self, p: Painter, hx: float, hy: float, ax: float, ay: float) -> None:
        u = self.u
        base = hy - 0.16 * u
        p.poly("hat", arc(hx, base, ax * 1.06, ay * 0.9, 180, 360, 14))
        p.poly("hat", [(hx + ax * 0.8, base - 0.05 * u), (hx + ax + 0.55 * u, base + 0.02 * u),
                       (hx + ax + 0.5 * u, base + 0.08 * u), (hx + ax * 0.8, base + 0.04 * u)])

    def _hat_side_beanie(self, p: Painter, hx: float, hy: float, ax: float, ay: float) -> None:
        u = self.u
        p.poly("hat", arc(hx - 0.03 * u, hy - 0.02 * u, ax * 1.08, ay * 1.12, 180, 360, 14))
        band = [(hx - ax * 1.1, hy - 0.2 * u), (hx + ax * 1.06, hy - 0.2 * u), (hx + ax * 1.06, hy),
                (hx - ax * 1.1, hy)]
        p.poly("hat_shade", band, edge=False)
        p.outline("hat", band, closed=True)
        if self.look.pompom:
            p.circle("hat", (hx - 0.05 * u, hy - ay * 1.15 - 0.07 * u), 0.14 * u)

    def _hat_side_brimmed_hat(self, p: Painter, hx: float, hy: float, ax: float, ay: float) -> None:
        u = self.u
        base = hy - 0.2 * u
        p.ellipse("hat", (hx, base), (ax * 1.9, 0.1 * u))
        crown = [(hx - ax * 0.95, base), (hx - ax * 0.9, base - 0.4 * u)] + arc(hx, base - 0.4 * u, ax * 0.9, 0.16 * u,
                                                                                180, 360, 8)[1:-1] + \
                [(hx + ax * 0.9, base - 0.4 * u), (hx + ax * 0.95, base)]
        p.poly("hat", crown)
        p.poly("dark", [(hx - ax * 0.95, base - 0.02 * u), (hx - ax * 0.93, base - 0.14 * u),
                        (hx + ax * 0.93, base - 0.14 * u), (hx + ax * 0.95, base - 0.02 * u)], edge=False)

    def _hat_side_helmet(self, p: Painter, hx: float, hy: float, ax: float, ay: float) -> None:
        u = self.u
        base = hy - 0.08 * u
        p.poly("hat", arc(hx - 0.05 * u, base, ax * 1.25, ay * 1.15, 170, 370, 16) + [(hx + ax * 1.3, base + 0.05 * u)])
        for k in (-1, 0, 1):
            x = hx + k * ax * 0.5
            p.poly("dark", [(x - 0.06 * u, base - ay * 0.95), (x + 0.06 * u, base - ay * 0.95),
                            (x + 0.07 * u, base - ay * 0.55), (x - 0.05 * u, base - ay * 0.55)], edge=False)
        p.line("dark", [(hx - 0.05 * u, base + 0.05 * u), (hx + ax * 0.6, self.chin_y - 0.02 * u)], 1)

    def _backpack_side(self, p: Painter) -> None:
        u, cx = self.u, self.cx
        x1 = cx - self.d_back * 0.9 + self.lean * 0.5
        x0 = x1 - 0.6 * u
        top, bot = self.ys + 0.05 * u, self.waist_y + 0.3 * u
        pts = [(x1, top), (x0 + 0.1 * u, top - 0.02 * u), (x0, top + 0.2 * u), (x0 - 0.02 * u, bot), (x1, bot)]
        p.poly("carry", pts)
        p.poly("carry", [(x0, bot - 0.8 * u), (x0 - 0.14 * u, bot - 0.7 * u), (x0 - 0.14 * u, bot - 0.1 * u),
                         (x0, bot - 0.05 * u)])
        p.line("carry_shade", [(cx - 0.05 * u + self.lean, self.ys), (cx + self.d_front * 0.6, self.ys + 0.6 * u),
                               (cx + self.d_front * 0.3, self.waist_y)], max(2.0, 0.1 * u))

    def _shoulder_bag_side(self, p: Painter) -> None:
        u, cx = self.u, self.cx
        p.line("carry_shade", [(cx - self.d_back * 0.5 + self.lean, self.ys), (cx + self.d_front * 0.8,
                                                                               self.hip_y - 0.3 * u)],
               max(2.0, 0.09 * u))
        c = (cx + self.d_front * 0.5, self.hip_y + 0.05 * u)
        bw, bh = 0.42 * u, 0.36 * u
        p.poly("carry", [(c[0] - bw, c[1] - bh), (c[0] + bw, c[1] - bh), (c[0] + bw, c[1] + bh), (c[0] - bw,
                                                                                                  c[1] + bh)])
        p.poly("carry", [(c[0] - bw, c[1] - bh), (c[0] + bw, c[1] - bh), (c[0] + bw, c[1]), (c[0] - bw,
                                                                                             c[1] + 0.05 * u)])
        p.circle("metal", (c[0], c[1]), max(1.0, 0.05 * u))

    def _suitcase_side(self, p: Painter) -> None:
        u = self.u
        hx, hy = self._hand_point()
        cx = hx - 0.5 * u
        top = min(self.gy - 2.0 * u, hy + 0.45 * u)
        bw = 0.35 * u
        p.line("metal", [(hx, hy), (cx + bw * 0.6, top)], max(1.5, 0.06 * u))
        body = [(cx - bw, top), (cx + bw, top), (cx + bw, self.gy - 0.15 * u), (cx - bw, self.gy - 0.15 * u)]
        p.poly("carry", body)
        for k in (-1, 1):
            p.line("carry_line", [(cx + k * bw * 0.5, top + 0.15 * u), (cx + k * bw * 0.5, self.gy - 0.3 * u)], 1)
        p.circle("dark", (cx, self.gy - 0.08 * u), 0.08 * u)
