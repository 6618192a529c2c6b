//! Frame traces for video sources.

use crate::rng::Rng;
use std::path::Path;

/// One frame of a trace.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Frame {
    /// Offset from the start of the trace, seconds.
    pub t: f64,
    /// Size, bytes.
    pub bytes: u32,
}

/// A frame-size trace.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameTrace {
    /// Name shown in results (a file name, or `synthetic-mpeg`).
    pub name: String,
    /// Frames in time order.
    pub frames: Vec<Frame>,
    /// Length of one pass of the trace, seconds (it loops).
    pub period: f64,
}

/// The largest frame-trace file read, bytes (64 MiB: some million frames).
pub const MAX_TRACE_BYTES: u64 = 64 << 20;

impl FrameTrace {
    /// Mean rate of the trace, bits per second.
    pub fn mean_bps(&self) -> f64 {
        self.frames
            .iter()
            .map(|f| f.bytes as f64 * 8.0)
            .sum::<f64>()
            / self.period
    }

    /// Parses a trace. Two formats are recognised line by line: the generic two-column
    /// `time size` (seconds, bytes), and the TU Berlin video-trace layout
    /// `frame-number time type size [...]` (time in ms, e.g. `12 480.0 P 1632`). Lines
    /// starting with `#` and blank lines are skipped.
    pub fn parse(name: &str, text: &str) -> Result<Self, String> {
        let mut frames = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let cols: Vec<&str> = line.split_whitespace().collect();
            // (The line itself is never echoed: the file may be anything.)
            let bad = |what: &str| format!("line {}: {what}", i + 1);
            let frame = match cols.len() {
                2 => Frame {
                    t: cols[0].parse().map_err(|_| bad("time is not a number"))?,
                    bytes: cols[1].parse().map_err(|_| bad("size is not an integer"))?,
                },
                n if n >= 4 && cols[2].chars().all(|c| c.is_ascii_alphabetic()) => Frame {
                    t: cols[1]
                        .parse::<f64>()
                        .map_err(|_| bad("time is not a number"))?
                        / 1e3,
                    bytes: cols[3].parse().map_err(|_| bad("size is not an integer"))?,
                },
                _ => return Err(bad("expected `time size` or `frame time type size`")),
            };
            if frame.t.is_nan() || frame.t < 0.0 {
                return Err(bad("negative time"));
            }
            frames.push(frame);
        }
        if frames.len() < 2 {
            return Err("a trace needs at least two frames".into());
        }
        for w in frames.windows(2) {
            if w[1].t < w[0].t {
                return Err(format!("times decrease at t = {} s", w[1].t));
            }
        }
        let n = frames.len();
        let step = (frames[n - 1].t - frames[0].t) / (n - 1) as f64;
        let t0 = frames[0].t;
        frames.iter_mut().for_each(|f| f.t -= t0);
        let period = frames[n - 1].t + step;
        Ok(FrameTrace {
            name: name.to_string(),
            frames,
            period,
        })
    }

    /// Loads a trace file: a regular file of at most 64 MiB of text (`MAX_TRACE_BYTES`).
    pub fn load(path: &Path) -> Result<Self, String> {
        use std::io::Read;
        let shown = crate::scenario::walk::shown_max(&path.display().to_string(), 200);
        let cannot = |why: String| format!("cannot read trace {shown}: {why}");
        let file = std::fs::File::open(path).map_err(|e| cannot(e.to_string()))?;
        let meta = file.metadata().map_err(|e| cannot(e.to_string()))?;
        if !meta.is_file() {
            return Err(cannot("not a regular file".into()));
        }
        if meta.len() > MAX_TRACE_BYTES {
            return Err(cannot(format!(
                "{} bytes, more than the {MAX_TRACE_BYTES} a trace may have",
                meta.len()
            )));
        }
        let mut bytes = Vec::new();
        file.take(MAX_TRACE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| cannot(e.to_string()))?;
        if bytes.len() as u64 > MAX_TRACE_BYTES {
            return Err(cannot(format!(
                "more than the {MAX_TRACE_BYTES} bytes a trace may have"
            )));
        }
        let text = String::from_utf8(bytes).map_err(|_| cannot("not UTF-8 text".into()))?;
        Self::parse(&path.display().to_string(), &text).map_err(|e| format!("trace {shown}: {e}"))
    }

    /// A deterministic synthetic MPEG-like trace: 25 frames/s, GOP `IBBPBBPBBPBB`, frame
    /// sizes lognormal around per-type means in the ratio I:P:B = 5:2:1, scaled so the
    /// whole trace's mean rate is exactly `mean_bps`; `seconds` long. It stands in for the
    /// published video traces, which cannot be downloaded here, and is always named
    /// `synthetic-mpeg` in results.
    pub fn synthetic_mpeg(mean_bps: f64, seconds: f64, seed: u64) -> Self {
        const GOP: &[u8] = b"IBBPBBPBBPBB";
        let fps = 25.0;
        let n = (seconds * fps).round().max(GOP.len() as f64) as usize;
        let mut r = Rng::stream(seed, "synthetic-mpeg");
        let weight = |c: u8| match c {
            b'I' => 5.0,
            b'P' => 2.0,
            _ => 1.0,
        };
        // Scene activity varies slowly (AR(1) in log space) as in real video.
        let mut scene: f64 = 0.0;
        let raw: Vec<f64> = (0..n)
            .map(|i| {
                if i % GOP.len() == 0 {
                    let g = {
                        // Box-Muller normal
                        let (u1, u2) = (r.uniform_pos(), r.uniform());
                        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
                    };
                    scene = 0.8 * scene + 0.3 * g;
                }
                let (u1, u2) = (r.uniform_pos(), r.uniform());
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                weight(GOP[i % GOP.len()]) * (scene + 0.25 * z).exp()
            })
            .collect();
        let target_bytes = mean_bps * n as f64 / fps / 8.0;
        let scale = target_bytes / raw.iter().sum::<f64>();
        let mut frames: Vec<Frame> = raw
            .iter()
            .enumerate()
            .map(|(i, w)| Frame {
                t: i as f64 / fps,
                bytes: (w * scale).round().max(1.0) as u32,
            })
            .collect();
        // Put the rounding residue on the first frame so the mean is exact.
        let total: i64 = frames.iter().map(|f| f.bytes as i64).sum();
        let want = target_bytes.round() as i64;
        frames[0].bytes = (frames[0].bytes as i64 + want - total).max(1) as u32;
        FrameTrace {
            name: "synthetic-mpeg".into(),
            frames,
            period: n as f64 / fps,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn synthetic_trace_mean_is_exact_and_deterministic() {
        let a = FrameTrace::synthetic_mpeg(769_000.0, 600.0, 1);
        let b = FrameTrace::synthetic_mpeg(769_000.0, 600.0, 1);
        assert_eq!(a, b);
        assert!((a.mean_bps() - 769_000.0).abs() / 769_000.0 < 1e-6);
        // I frames are the largest on average.
        let mean_of = |k: usize| {
            let v: Vec<f64> = a
                .frames
                .iter()
                .skip(k)
                .step_by(12)
                .map(|f| f.bytes as f64)
                .collect();
            v.iter().sum::<f64>() / v.len() as f64
        };
        assert!(mean_of(0) > 2.0 * mean_of(1));
    }

    #[test]
    fn parses_both_formats_and_rejects_garbage() {
        let t = FrameTrace::parse("g", "# c\n0.0 100\n0.04 200\n0.08 300\n").unwrap();
        assert_eq!(t.frames.len(), 3);
        assert!((t.period - 0.12).abs() < 1e-12);
        let t = FrameTrace::parse("tub", "0 0.0 I 5000\n1 40.0 B 800\n2 80.0 B 700\n").unwrap();
        assert_eq!(
            t.frames[1],
            Frame {
                t: 0.04,
                bytes: 800
            }
        );
        let e = FrameTrace::parse("bad", "0.0 100\n0.04 abc\n").unwrap_err();
        assert!(e.contains("line 2"), "{e}");
    }
}
