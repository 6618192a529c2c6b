//! Python bindings of qossim: `qossim._core`.
//!
//! Thin by design: scenario text in, a dict of results out. Runs release the GIL and take
//! it back only to report progress (about every 65 000 events) and to check for Ctrl-C.

use pyo3::create_exception;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use qossim::scenario;
use serde_json::Value;
use std::path::Path;

create_exception!(
    _core,
    ScenarioError,
    PyValueError,
    "A scenario is invalid; the message lists every problem as FILE:LINE: key.path: reason."
);

create_exception!(
    _core,
    EngineError,
    PyRuntimeError,
    "The engine failed inside a run (an internal error, not a mistake in the scenario)."
);

/// Runs `f`, turning a panic into an `EngineError` naming the scenario file (a panic must
/// never cross into Python as a bare `PanicException`).
fn guarded<T>(filename: &str, f: impl FnOnce() -> T) -> Result<T, String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|e| {
        let what = e
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| e.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        format!("{filename}: internal engine error: {what}")
    })
}

/// Every declared statistic: a list of `{component, name, unit, window, doc}` (see
/// `qossim::metrics::declared`).
#[pyfunction]
fn statistics(py: Python<'_>) -> PyResult<PyObject> {
    let mut rows = Vec::new();
    for t in qossim::metrics::declared::all() {
        for s in t.stats {
            rows.push(serde_json::json!({
                "component": t.component,
                "name": s.name,
                "unit": s.unit,
                "window": s.window.name(),
                "doc": s.doc,
            }));
        }
    }
    to_py(py, &Value::Array(rows))
}

/// Panics inside the same guard a run uses (for testing the guard only).
#[pyfunction]
fn _panic_for_test(py: Python<'_>, filename: &str) -> PyResult<()> {
    py.allow_threads(|| guarded(filename, || panic!("deliberate test panic")))
        .map_err(EngineError::new_err)
}

fn to_py(py: Python<'_>, v: &Value) -> PyResult<PyObject> {
    Ok(match v {
        Value::Null => py.None(),
        Value::Bool(b) => b.into_pyobject(py)?.to_owned().into_any().unbind(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into_pyobject(py)?.into_any().unbind()
            } else if let Some(u) = n.as_u64() {
                u.into_pyobject(py)?.into_any().unbind()
            } else {
                n.as_f64()
                    .unwrap_or(f64::NAN)
                    .into_pyobject(py)?
                    .into_any()
                    .unbind()
            }
        }
        Value::String(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::Array(a) => {
            let l = PyList::empty(py);
            for x in a {
                l.append(to_py(py, x)?)?;
            }
            l.into_any().unbind()
        }
        Value::Object(m) => {
            let d = PyDict::new(py);
            for (k, x) in m {
                d.set_item(k, to_py(py, x)?)?;
            }
            d.into_any().unbind()
        }
    })
}

fn parse(
    text: &str,
    filename: &str,
    overrides: &[(String, String)],
) -> PyResult<Result<scenario::Scenario, Vec<scenario::Diagnostic>>> {
    let base = Path::new(filename)
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // Reading is guarded like a run: a panic is an internal error, never a bare panic.
    guarded(filename, || qossim::parse(text, filename, base, overrides))
        .map_err(EngineError::new_err)
}

/// The qossim version.
#[pyfunction]
fn version() -> &'static str {
    qossim::VERSION
}

/// The registered components and their declared parameters, as JSON text: a list of
/// `{kind, group, name, aliases, title, doc, params}` (see `qossim::decl::catalogue`).
#[pyfunction]
fn describe() -> String {
    qossim::decl::catalogue().to_string()
}

/// Validates scenario text; returns the list of problems (empty when valid), each
/// formatted `FILE:LINE: key.path: reason`.
#[pyfunction]
#[pyo3(signature = (text, filename, overrides=Vec::new()))]
fn validate(text: &str, filename: &str, overrides: Vec<(String, String)>) -> PyResult<Vec<String>> {
    Ok(match parse(text, filename, &overrides)? {
        Ok(_) => Vec::new(),
        Err(d) => d.iter().map(|d| d.to_string()).collect(),
    })
}

/// Runs a scenario. Returns a dict with `summary`, `series` (name -> {"t": [...],
/// "value": [...]}), `units`, `events`, `sim_time_s`, `wall_s`, `seed`, `scenario_hash`,
/// `trace_hash` (with `fingerprint_events`: run at most that many events, hashing them;
/// `check_invariants` fails the run if its bookkeeping does not add up),
/// and, when the scenario has `[[trace]]` entries, `traces` (a list of {"name", "path",
/// "records", "pcap"} of raw record files written into `trace_dir`), `link_names` and
/// `node_names`. `build_progress(done, total)` is called while a scenario of many flows is
/// built (see `BuildProgress`). Raises `ScenarioError` for an invalid scenario and
/// `KeyboardInterrupt` on Ctrl-C.
#[pyfunction]
#[pyo3(signature = (text, filename, seed=None, overrides=Vec::new(), progress=None, trace_dir=None, fingerprint_events=None, check_invariants=false, build_progress=None))]
#[allow(clippy::too_many_arguments)] // one per Python keyword argument
fn run(
    py: Python<'_>,
    text: &str,
    filename: &str,
    seed: Option<u64>,
    overrides: Vec<(String, String)>,
    progress: Option<PyObject>,
    trace_dir: Option<std::path::PathBuf>,
    fingerprint_events: Option<u64>,
    check_invariants: bool,
    build_progress: Option<PyObject>,
) -> PyResult<PyObject> {
    // A signal (Ctrl-C, or SIGTERM with a Python handler) during a long build: its
    // handler runs here, and the build stops.
    let build_signal: std::sync::Arc<std::sync::Mutex<Option<PyErr>>> = Default::default();
    let seen = build_signal.clone();
    let options = scenario::RunOptions {
        trace_dir,
        fingerprint_events,
        check_invariants,
        memory_available: None,
        build_stop: Some(scenario::BuildStop(std::sync::Arc::new(move || {
            Python::with_gil(|py| match py.check_signals() {
                Ok(()) => false,
                Err(e) => {
                    if let Ok(mut slot) = seen.lock() {
                        slot.get_or_insert(e);
                    }
                    true
                }
            })
        }))),
        build_progress: build_progress.map(|cb| {
            scenario::BuildProgress(std::sync::Arc::new(move |done: u64, total: u64| {
                // A display problem must never stop a build.
                Python::with_gil(|py| {
                    let _ = cb.call1(py, (done, total));
                });
            }))
        }),
    };
    let sc = parse(text, filename, &overrides)?.map_err(|d| {
        ScenarioError::new_err(
            d.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        )
    })?;
    let mut interrupted: Option<PyErr> = None;
    let out = py.allow_threads(|| {
        let mut cb = |f: f64| -> bool {
            Python::with_gil(|py| {
                if let Err(e) = py.check_signals() {
                    interrupted = Some(e);
                    return false;
                }
                if let Some(p) = &progress {
                    if let Err(e) = p.call1(py, (f,)) {
                        interrupted = Some(e);
                        return false;
                    }
                }
                true
            })
        };
        guarded(filename, || {
            scenario::run_with(&sc, seed, &mut cb, &options)
        })
    });
    if let Some(e) = interrupted {
        return Err(e);
    }
    if let Some(e) = build_signal.lock().ok().and_then(|mut s| s.take()) {
        return Err(e);
    }
    let out = out
        .map_err(EngineError::new_err)?
        .map_err(PyValueError::new_err)?;
    if out.interrupted {
        return Err(PyKeyboardInterrupt::new_err("run interrupted"));
    }
    let d = PyDict::new(py);
    d.set_item("summary", to_py(py, &Value::Object(out.summary))?)?;
    let series = PyDict::new(py);
    let units = PyDict::new(py);
    for s in &out.series {
        let cols = PyDict::new(py);
        cols.set_item("t", PyList::new(py, &s.t)?)?;
        cols.set_item("value", PyList::new(py, &s.v)?)?;
        series.set_item(&s.name, cols)?;
        units.set_item(&s.name, s.unit)?;
    }
    d.set_item("series", series)?;
    d.set_item("units", units)?;
    d.set_item("events", out.events)?;
    d.set_item("sim_time_s", out.sim_time_s)?;
    d.set_item("wall_s", out.wall_s)?;
    d.set_item("seed", out.seed)?;
    d.set_item("scenario_hash", out.scenario_hash)?;
    if let Some(h) = out.trace_hash {
        d.set_item("trace_hash", format!("{h:016x}"))?;
    }
    if !out.traces.is_empty() {
        let traces = PyList::empty(py);
        for t in &out.traces {
            let e = PyDict::new(py);
            e.set_item("name", &t.name)?;
            e.set_item("path", t.path.display().to_string())?;
            e.set_item("records", t.records)?;
            e.set_item("pcap", t.pcap)?;
            traces.append(e)?;
        }
        d.set_item("traces", traces)?;
        d.set_item("link_names", PyList::new(py, &out.link_names)?)?;
        d.set_item("node_names", PyList::new(py, &out.node_names)?)?;
        d.set_item("tcp_flows", PyList::new(py, &out.tcp_flows)?)?;
    }
    Ok(d.into_any().unbind())
}

/// The compiled core of qossim.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(statistics, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("EngineError", m.py().get_type::<EngineError>())?;
    Ok(())
}
