"""A synthetic, long-range-dependent video frame trace, shaped by a token bucket.

The endpoint admission study's video source replays a frame trace reshaped by dropping
to a token bucket. No recorded trace ships with qossim, so this module makes one,
deterministically and clearly labelled synthetic: frame sizes are lognormal with
long-range-dependent correlation (fractional Gaussian noise of Hurst parameter H, by
the circulant-embedding method), at a fixed frame rate. The trace is then shaped once:
every frame is cut into packets, and a packet that finds too few tokens is dropped. The
bucket runs twice round the looping trace and the second pass decides, so the shaped
trace conforms across its loop point too; a sequence that conforms from some bucket
level conforms from a fuller one, so a flow starting anywhere in it with a full bucket
conforms as well.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class VideoSpec:
    """What the synthetic trace is made of."""

    frames: int = 1 << 15
    fps: float = 24.0
    mean_bps: float = 374e3
    hurst: float = 0.8
    sigma: float = 0.6
    seed: int = 1
    packet_bytes: int = 200
    token_bps: float = 800e3
    bucket_bits: float = 200e3


def fgn(n: int, hurst: float, seed: int) -> list[float]:
    """``n`` samples of unit-variance fractional Gaussian noise (circulant embedding)."""
    import numpy as np

    k = np.arange(n + 1, dtype=float)
    h2 = 2 * hurst
    gamma = 0.5 * (np.abs(k + 1) ** h2 - 2 * np.abs(k) ** h2 + np.abs(k - 1) ** h2)
    row = np.concatenate([gamma, gamma[-2:0:-1]])
    lam = np.fft.fft(row).real
    lam = np.clip(lam, 0.0, None)
    m = len(row)
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(m) + 1j * rng.standard_normal(m)
    x = np.fft.fft(np.sqrt(lam / m) * w)
    return [float(v) for v in x.real[:n]]


def frames(spec: VideoSpec) -> list[int]:
    """Unshaped frame sizes, bytes (mean ``mean_bps / fps / 8``)."""
    mean = spec.mean_bps / spec.fps / 8
    z = fgn(spec.frames, spec.hurst, spec.seed)
    return [max(1, round(mean * math.exp(spec.sigma * v - spec.sigma**2 / 2))) for v in z]


def shape(sizes: list[int], spec: VideoSpec) -> list[int]:
    """Frame sizes after dropping the packets the token bucket does not admit."""
    pkt_bits = spec.packet_bytes * 8
    per_frame = spec.token_bps / spec.fps
    tokens = spec.bucket_bits
    out = list(sizes)
    for rnd in range(2):
        for i, size in enumerate(sizes):
            tokens = min(spec.bucket_bits, tokens + per_frame)
            kept = 0
            for _ in range(math.ceil(size / spec.packet_bytes)):
                if tokens >= pkt_bits:
                    tokens -= pkt_bits
                    kept += 1
            if rnd == 1:
                out[i] = kept * spec.packet_bytes
    return out


def write(path: str | Path, spec: VideoSpec = VideoSpec()) -> Path:
    """Write the shaped synthetic trace as a two-column ``time size`` file."""
    raw = frames(spec)
    shaped = shape(raw, spec)
    dropped = 1 - sum(shaped) / sum(
        math.ceil(s / spec.packet_bytes) * spec.packet_bytes for s in raw
    )
    lines = [
        "# SYNTHETIC video frame trace (not a recorded video), made by qossim:",
        f"# lognormal frame sizes (sigma {spec.sigma}) with long-range dependence (fractional "
        f"Gaussian noise, H = {spec.hurst}), {spec.fps:g} frames/s, mean {spec.mean_bps:g} b/s,",
        f"# seed {spec.seed}; shaped by dropping to a token bucket r = {spec.token_bps:g} b/s, "
        f"b = {spec.bucket_bits:g} bits ({spec.packet_bytes}-byte packets; "
        f"{100 * dropped:.2f} % dropped).",
        "# time_s size_bytes",
    ]
    for i, size in enumerate(shaped):
        if size > 0:
            lines.append(f"{i / spec.fps:.6f} {size}")
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p
