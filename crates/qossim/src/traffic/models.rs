//! Named traffic models: the voice codecs and video models of the PCN study, usable by
//! name in scenarios (`model = "G.711-VBR-20ms"`).

use super::source::{Period, SourceModel};

/// A named voice codec: packet size, inter-packet time, on-fraction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Codec {
    /// Name as written in scenarios.
    pub name: &'static str,
    /// Packet size, bytes.
    pub size: u32,
    /// Inter-packet time while on, seconds.
    pub interval: f64,
    /// Fraction of time on (1 = CBR).
    pub on_fraction: f64,
}

/// The eight voice codecs (size B, inter-packet ms, on-fraction). On-off codecs have
/// exponential on and off periods with a 1 s mean cycle.
pub const CODECS: &[Codec] = &[
    Codec {
        name: "CBR",
        size: 160,
        interval: 0.020,
        on_fraction: 1.0,
    },
    Codec {
        name: "VBR",
        size: 160,
        interval: 0.020,
        on_fraction: 0.34,
    },
    Codec {
        name: "G.711-CBR-20ms",
        size: 200,
        interval: 0.020,
        on_fraction: 1.0,
    },
    Codec {
        name: "G.711-VBR-20ms",
        size: 200,
        interval: 0.020,
        on_fraction: 0.4,
    },
    Codec {
        name: "G.711-CBR-10ms",
        size: 120,
        interval: 0.010,
        on_fraction: 1.0,
    },
    Codec {
        name: "G.711-VBR-10ms",
        size: 120,
        interval: 0.010,
        on_fraction: 0.4,
    },
    Codec {
        name: "G.729-CBR",
        size: 60,
        interval: 0.020,
        on_fraction: 1.0,
    },
    Codec {
        name: "G.729-VBR",
        size: 60,
        interval: 0.020,
        on_fraction: 0.4,
    },
];

impl Codec {
    /// The source model of this codec.
    pub fn model(&self) -> SourceModel {
        if self.on_fraction >= 1.0 {
            SourceModel::Cbr {
                size: self.size,
                interval: self.interval,
            }
        } else {
            SourceModel::OnOff {
                size: self.size,
                interval: self.interval,
                on: Period::Exp(self.on_fraction),
                off: Period::Exp(1.0 - self.on_fraction),
            }
        }
    }
}

/// The model called `name`: a codec, `MIX` (one of the six G.711/G.729 codecs with equal
/// probability per flow) or `SVD` (synthetic video: on-off, exponential on 340 ms at
/// 12 Mb/s — 1500 B every 1 ms — and off 660 ms). Case-insensitive.
pub fn named_model(name: &str) -> Option<SourceModel> {
    if let Some(c) = CODECS.iter().find(|c| c.name.eq_ignore_ascii_case(name)) {
        return Some(c.model());
    }
    match name.to_ascii_uppercase().as_str() {
        "MIX" => Some(SourceModel::Mix(
            CODECS[2..].iter().map(|c| c.model()).collect(),
        )),
        "SVD" => Some(SourceModel::OnOff {
            size: 1500,
            interval: 0.001,
            on: Period::Exp(0.340),
            off: Period::Exp(0.660),
        }),
        _ => None,
    }
}

/// Names accepted by [`named_model`].
pub fn model_names() -> Vec<&'static str> {
    let mut v: Vec<&str> = CODECS.iter().map(|c| c.name).collect();
    v.extend(["MIX", "SVD"]);
    v
}

/// Each name of [`model_names`] with one line saying what it sends (for `describe`).
pub fn named_docs() -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = CODECS
        .iter()
        .map(|c| {
            let every = format!("{} B every {} ms", c.size, c.interval * 1e3);
            let doc = if c.on_fraction >= 1.0 {
                format!("Voice codec: {every}, always on.")
            } else {
                format!(
                    "Voice codec: {every} while on; exponential on and off periods, on {} of a 1 s mean cycle.",
                    c.on_fraction
                )
            };
            (c.name, doc)
        })
        .collect();
    out.push((
        "MIX",
        "Each flow one of the six G.711/G.729 codecs, with equal probability.".into(),
    ));
    out.push((
        "SVD",
        "Synthetic video: 1500 B every 1 ms while on; exponential on 340 ms and off 660 ms.".into(),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codec_mean_rates_match_the_table() {
        let kbps = [64.0, 21.76, 80.0, 32.0, 96.0, 38.4, 24.0, 9.6];
        for (c, k) in CODECS.iter().zip(kbps) {
            let got = c.model().mean_bps() / 1e3;
            assert!((got - k).abs() < 0.01, "{}: {got} vs {k}", c.name);
        }
        let svd = named_model("svd").unwrap().mean_bps();
        assert!((svd - 4.08e6).abs() < 1.0);
    }

    #[test]
    fn every_named_model_is_described() {
        let described: Vec<&str> = named_docs().iter().map(|(n, _)| *n).collect();
        assert_eq!(described, model_names());
    }
}
