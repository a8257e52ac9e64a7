//! The peers, installed from their package registries into a scratch directory (kept between
//! runs and reinstalled when a pin changes): python-hl7 from PyPI into a virtual environment,
//! the node libraries from npm by the committed lock file, and the driver scripts beside them.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const PYTHON_HL7: &str = "0.4.5";

const PY_SERVER: &str = include_str!("peers/py_server.py");
const PY_CLIENT: &str = include_str!("peers/py_client.py");
const NODE_FILES: [(&str, &str); 8] = [
    ("package.json", include_str!("peers/package.json")),
    ("package-lock.json", include_str!("peers/package-lock.json")),
    ("common.js", include_str!("peers/common.js")),
    ("node_client.js", include_str!("peers/node_client.js")),
    ("node_server.js", include_str!("peers/node_server.js")),
    ("simple_client.js", include_str!("peers/simple_client.js")),
    ("simple_server.js", include_str!("peers/simple_server.js")),
    (".gitignore", "*\n"),
];

/// Where each runtime's peers are, or why they are not there.
pub struct Peers {
    /// The virtual environment's python and the directory of its scripts.
    pub python: Result<(PathBuf, PathBuf), String>,
    /// The directory with `node_modules` and the node scripts.
    pub node: Result<PathBuf, String>,
    /// (package, version) of what was installed, runtimes included.
    pub versions: Vec<(String, String)>,
}

pub fn install(scratch: &Path) -> Peers {
    std::fs::create_dir_all(scratch).expect("create the scratch directory");
    let mut versions = Vec::new();
    let python = install_python(&scratch.join("py"), &mut versions);
    let node = install_node(&scratch.join("node"), &mut versions);
    Peers {
        python,
        node,
        versions,
    }
}

fn install_python(
    dir: &Path,
    versions: &mut Vec<(String, String)>,
) -> Result<(PathBuf, PathBuf), String> {
    let python = dir.join("bin/python");
    if !python.exists() {
        run(Command::new("python3").args(["-m", "venv"]).arg(dir))?;
    }
    let installed = |python: &Path| {
        output(Command::new(python).args(["-c", "import hl7; print(hl7.__version__)"])).ok()
    };
    if installed(&python).as_deref() != Some(PYTHON_HL7) {
        eprintln!("installing python-hl7 {PYTHON_HL7} into {}", dir.display());
        run(Command::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
            ])
            .arg(format!("hl7=={PYTHON_HL7}")))?;
    }
    let version = installed(&python).ok_or("python-hl7 does not import after installing")?;
    versions.push(("python-hl7".into(), version));
    let runtime = output(Command::new(&python).arg("--version"))?;
    let runtime = runtime.trim_start_matches("Python ").to_string();
    versions.push(("python".into(), runtime));
    let scripts = dir.join("peers");
    std::fs::create_dir_all(&scripts).map_err(|e| e.to_string())?;
    for (name, text) in [("py_server.py", PY_SERVER), ("py_client.py", PY_CLIENT)] {
        std::fs::write(scripts.join(name), text).map_err(|e| e.to_string())?;
    }
    Ok((python, scripts))
}

fn install_node(dir: &Path, versions: &mut Vec<(String, String)>) -> Result<PathBuf, String> {
    let node = output(Command::new("node").arg("--version"))?;
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let lock = dir.join("package-lock.json");
    let current = std::fs::read_to_string(&lock).ok();
    for (name, text) in NODE_FILES {
        std::fs::write(dir.join(name), text).map_err(|e| e.to_string())?;
    }
    let lock_text = NODE_FILES[1].1;
    if current.as_deref() != Some(lock_text) || !dir.join("node_modules").exists() {
        eprintln!("installing the node peers into {}", dir.display());
        run(Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(dir))?;
    }
    for package in ["node-hl7-client", "node-hl7-server", "simple-hl7"] {
        let manifest = dir.join("node_modules").join(package).join("package.json");
        let text = std::fs::read_to_string(&manifest)
            .map_err(|e| format!("{package} is not installed: {e}"))?;
        let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        let version = json["version"].as_str().unwrap_or("?").to_string();
        versions.push((package.into(), version));
    }
    versions.push(("node".into(), node));
    Ok(dir.to_path_buf())
}

/// Runs a command to success; its stderr is the error otherwise.
fn run(cmd: &mut Command) -> Result<(), String> {
    output(cmd).map(|_| ())
}

/// A command's trimmed stdout, or why it failed.
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
