//! python-hl7 and hl7apy, installed from PyPI into a virtual environment (kept between runs,
//! reinstalled when a pin changes), and timed getting PID-3.1 and PID-5 out of each message.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

pub const PYTHON_HL7: &str = "0.4.5";
pub const HL7APY: &str = "1.3.5";

/// Reads the messages (one file, split at each `\rMSH`), then for each: parse, get PID-3.1 and
/// PID-5; prints the best per-message seconds of three passes.
const SCRIPT: &str = r#"
import sys, time
reader, path = sys.argv[1], sys.argv[2]
data = open(path, "rb").read().decode("ascii")
messages = ["MSH" + m if i else m for i, m in enumerate(data.split("\rMSH"))]
messages = [m if m.endswith("\r") else m + "\r" for m in messages]
if reader == "python-hl7":
    import hl7
    def get(text):
        m = hl7.parse(text)
        return m.extract_field("PID", 1, 3, 1, 1), str(m.segment("PID")[5])
else:
    from hl7apy.parser import parse_message
    def get(text):
        m = parse_message(text.replace("\n", "\r"), find_groups=False)
        return m.pid.pid_3[0].pid_3_1.value, m.pid.pid_5[0].value
best = None
for _ in range(3):
    started = time.perf_counter()
    for text in messages:
        got = get(text)
    per = (time.perf_counter() - started) / len(messages)
    best = per if best is None else min(best, per)
assert got[0].isdigit(), got
print(best)
"#;

#[derive(Debug, Clone, Copy)]
pub enum Reader {
    PythonHl7,
    Hl7apy,
}

impl Reader {
    pub fn name(self) -> &'static str {
        match self {
            Reader::PythonHl7 => "python-hl7",
            Reader::Hl7apy => "hl7apy",
        }
    }
}

pub struct Env {
    python: PathBuf,
    script: PathBuf,
    python_version: String,
}

impl Env {
    pub fn label(&self, reader: Reader) -> String {
        let version = match reader {
            Reader::PythonHl7 => PYTHON_HL7,
            Reader::Hl7apy => HL7APY,
        };
        format!(
            "{} {version} (Python {})",
            reader.name(),
            self.python_version
        )
    }
}

pub fn install(dir: &Path) -> Result<Env, String> {
    let python = dir.join("bin/python");
    if !python.exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(dir))?;
    }
    let versions = |python: &Path| {
        output(Command::new(python).args([
            "-c",
            "import hl7, hl7apy; print(hl7.__version__, hl7apy.__version__)",
        ]))
        .ok()
    };
    let want = format!("{PYTHON_HL7} {HL7APY}");
    if versions(&python).as_deref() != Some(want.as_str()) {
        eprintln!(
            "installing python-hl7 {PYTHON_HL7} and hl7apy {HL7APY} into {}",
            dir.display()
        );
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(format!("hl7=={PYTHON_HL7}"))
            .arg(format!("hl7apy=={HL7APY}")))?;
    }
    if versions(&python).as_deref() != Some(want.as_str()) {
        return Err("python-hl7 and hl7apy do not import after installing".into());
    }
    let script = dir.join("hl7_read.py");
    std::fs::write(&script, SCRIPT).map_err(|e| e.to_string())?;
    let python_version = output(Command::new(&python).arg("--version"))?
        .trim_start_matches("Python ")
        .to_string();
    Ok(Env {
        python,
        script,
        python_version,
    })
}

/// Seconds per message, as the script measures it.
pub fn time(env: &Env, reader: Reader, file: &Path) -> Result<Duration, String> {
    let out = output(
        Command::new(&env.python)
            .arg(&env.script)
            .arg(reader.name())
            .arg(file),
    )?;
    let secs: f64 = out
        .trim()
        .parse()
        .map_err(|_| format!("not a time: {out}"))?;
    Ok(Duration::from_secs_f64(secs))
}

fn run(cmd: &mut Command) -> Result<(), String> {
    output(cmd).map(|_| ())
}

fn output(cmd: &mut Command) -> Result<String, String> {
    let what = format!("{:?}", cmd.get_program());
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{what} not runnable: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(format!("{what} failed ({}): {}", out.status, err.trim()));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}
