"""A sighting's stretch of a source video, cut without re-encoding: the video stream's packets copied as they
are (PyAV, which bundles FFmpeg's libraries; no ``ffmpeg`` program is needed) into a new file of the source's
container.

Frame ``i`` is the ``i``-th frame in presentation order, as ingest counts them (``engine.ingest.sources``). A
copy can only start at a keyframe, so a segment runs from the last keyframe at or before the sighting's first
frame to its last frame; packets the decoder needs that come later in presentation order (the references of
B-frames) ride along. The segment's timestamps are the source's, shifted so that it starts at zero; ``offset``
gives the shift. Only the video stream is copied.

``cut_segment`` raises ``SegmentError`` when the file cannot be cut (not a video, a container PyAV cannot
write, packets without timestamps); the package then carries the original file instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import av

from app.report.errors import ReportError


class SegmentError(ReportError):
    """A source video cannot be cut by stream copy (the message says why)."""


@dataclass(frozen=True)
class Segment:
    """What a cut holds: source frames ``first``..``last`` (presentation order; ``first`` is a keyframe at or
    before the frame asked for), ``frames`` packets copied, the source times of its first and last frame in
    seconds of the source's clock, the shift applied to its timestamps (seconds) and the codec."""

    first: int
    last: int
    frames: int
    start_seconds: float
    end_seconds: float
    offset_seconds: float
    codec: str


@dataclass(frozen=True)
class _Packet:
    order: int  # position in decode (file) order
    stamp: int  # presentation timestamp (the decode one where the container gives none)
    key: bool


def _video_packets(path: Path) -> tuple[list[_Packet], Fraction, str]:
    """The video stream's packets in file order (timestamps only: nothing is decoded), its time base, codec."""
    try:
        with av.open(str(path)) as source:
            if not source.streams.video:
                raise SegmentError(f"{path} has no video stream")
            stream = source.streams.video[0]
            out = []
            for packet in source.demux(stream):
                if packet.size == 0:  # the demuxer's end-of-stream marker
                    continue
                stamp = packet.pts if packet.pts is not None else packet.dts
                if stamp is None:
                    raise SegmentError(f"{path}: video packet {len(out)} has no timestamp")
                out.append(_Packet(len(out), int(stamp), bool(packet.is_keyframe)))
            return out, Fraction(stream.time_base), stream.codec_context.name
    except av.FFmpegError as exc:
        raise SegmentError(f"{path} cannot be read as a video: {exc}") from None


def plan(packets: list[_Packet], first: int, last: int) -> tuple[int, int, list[int]]:
    """(first frame, last frame, file positions of the packets to copy) for frames ``first``..``last``."""
    if first < 0 or last < first:
        raise SegmentError(f"frames {first}..{last} are not a range of frames")
    shown = sorted(packets, key=lambda p: (p.stamp, p.order))  # presentation order: index = frame number
    if last >= len(shown):
        raise SegmentError(f"the video has {len(shown)} frames; the sighting ends at frame {last}")
    keys = [index for index in range(first + 1) if shown[index].key]
    if not keys:
        raise SegmentError(f"no keyframe at or before frame {first}: a copy cannot start there")
    start = keys[-1]
    begin = shown[start].order
    end = max(shown[index].order for index in range(start, last + 1))
    frame_of = {packet.order: index for index, packet in enumerate(shown)}
    copied = list(range(begin, end + 1))
    frames = [frame_of[order] for order in copied]
    return min(frames), max(frames), copied


def cut_segment(source_path: str | Path, first: int, last: int, out_path: str | Path) -> Segment:
    """Copy the packets of source frames ``first``..``last`` (from the keyframe before) into ``out_path``, whose
    ending names the container (give it the source's). Nothing is decoded or encoded."""
    source_path, out_path = Path(source_path), Path(out_path)
    packets, base, codec = _video_packets(source_path)
    low, high, copied = plan(packets, first, last)
    wanted = set(copied)
    stamps = [packets[order].stamp for order in copied]
    try:
        with av.open(str(source_path)) as source, av.open(str(out_path), "w") as target:
            stream = source.streams.video[0]
            copy = target.add_stream_from_template(stream)
            shift: int | None = None
            position = -1
            for packet in source.demux(stream):
                if packet.size == 0:
                    continue
                position += 1
                if position > copied[-1]:
                    break
                if position not in wanted:
                    continue
                if shift is None:
                    shift = packet.dts if packet.dts is not None else packet.pts
                if packet.pts is not None:
                    packet.pts -= shift
                if packet.dts is not None:
                    packet.dts -= shift
                packet.stream = copy
                target.mux(packet)
    except av.FFmpegError as exc:
        raise SegmentError(f"{source_path} cannot be copied into a {out_path.suffix or 'container'} file: "
                           f"{exc}") from None
    except ValueError as exc:  # PyAV: no muxer for the ending, or the codec is not allowed in the container
        raise SegmentError(f"{source_path} cannot be copied into a {out_path.suffix or 'container'} file: "
                           f"{exc}") from None
    shown = sorted(stamps)
    return Segment(low, high, len(copied), float(shown[0] * base), float(shown[-1] * base),
                   float((shift or 0) * base), codec)
