"""Drawing on a canvas by material: ``Painter`` paints polygons, lines, ellipses and tubes anti-aliased with
cv2 at sub-pixel precision, each in a material ("skin", "top", …) that a modality turns into a colour, a
temperature or a pencil line; plus the geometry helpers the figure is built with (tubes, arcs, points along
a chain)."""

from __future__ import annotations

import math

import cv2
import numpy as np

from engine.lab.world.modalities import Paint

Point = tuple[float, float]



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
