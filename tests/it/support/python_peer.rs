//! python-hl7 (PyPI `hl7`) as an independent MLLP peer: finding it, its scripts written to a temp
//! dir, and its processes killed on drop. Missing Python fails the test under `CI`, skips otherwise.

use super::interop_peer::{InteropPeer, LineServer, WAIT};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The version `.ci/run` installs and these tests were written against.
pub const PINNED: &str = "0.4.5";

/// An asyncio MLLP server from `hl7.mllp`: answers every message with `hl7.Message.create_ack`
/// using the code in argv[1]; prints its port, then one `RECV <MSH-10>` line per message.
const SERVER: &str = r#"
import asyncio, sys
from hl7.mllp import start_hl7_server

CODE = sys.argv[1]

async def handle(reader, writer):
    try:
        while not writer.is_closing():
            message = await reader.readmessage()
            print("RECV " + str(message.segment("MSH")(10)), flush=True)
            writer.writemessage(message.create_ack(CODE))
            await writer.drain()
    except asyncio.IncompleteReadError:
        pass
    finally:
        writer.close()

async def main():
    server = await start_hl7_server(handle, host="127.0.0.1", port=0)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()

asyncio.run(main())
"#;

/// An asyncio MLLP client from `hl7.mllp`: writes every message of the file in argv[2]
/// (separated by a blank line) in one burst, then reads one ACK block per message, parses it
/// with `hl7.parse` and prints `MSA-1 MSA-2` per ACK.
const CLIENT: &str = r#"
import asyncio, sys
import hl7
from hl7.mllp import open_hl7_connection

async def main():
    port = int(sys.argv[1])
    messages = open(sys.argv[2], "rb").read().split(b"\n\n")
    reader, writer = await asyncio.wait_for(open_hl7_connection("127.0.0.1", port), 10)
    for message in messages:
        writer.writeblock(message)
    await writer.drain()
    for _ in messages:
        block = await asyncio.wait_for(reader.readblock(), 10)
        msa = hl7.parse(block.decode("ascii")).segment("MSA")
        print(str(msa(1)) + " " + str(msa(2)), flush=True)
    writer.close()

asyncio.run(main())
"#;

/// python3 with the `hl7` package, and a temporary directory for the scripts.
pub struct PythonPeer {
    pub dir: tempfile::TempDir,
    pub version: String,
}

impl PythonPeer {
    /// The peer, or `None` (with a note on stderr) when Python or `hl7` is missing and `CI` is
    /// unset. Under `CI` a missing peer fails the test: the interop tests must run there.
    pub fn find(test: &str) -> Option<PythonPeer> {
        let probe = Command::new("python3")
            .args([
                "-c",
                "import hl7, hl7.mllp, hl7.client; print(hl7.__version__)",
            ])
            .stdin(Stdio::null())
            .output();
        let version = match probe {
            Ok(out) if out.status.success() => {
                String::from_utf8_lossy(&out.stdout).trim().to_string()
            }
            Ok(out) => Self::missing(
                test,
                &format!(
                    "python3 cannot import hl7: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ),
            )?,
            Err(e) => Self::missing(test, &format!("python3 not runnable: {e}"))?,
        };
        if version != PINNED {
            eprintln!("{test}: python-hl7 {version} installed; these tests pin {PINNED}");
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("server.py"), SERVER).unwrap();
        std::fs::write(dir.path().join("client.py"), CLIENT).unwrap();
        Some(PythonPeer { dir, version })
    }

    fn missing(test: &str, why: &str) -> Option<String> {
        if std::env::var_os("CI").is_some() {
            panic!(
                "{test}: {why}; CI is set, so the interop peer is required \
                 (python3 -m pip install 'hl7=={PINNED}')"
            );
        }
        eprintln!(
            "SKIPPED {test}: {why} (install with python3 -m pip install 'hl7=={PINNED}'; \
             under CI this fails)"
        );
        None
    }

    pub fn script(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// `mllp_send` from python-hl7: the console script's own entry point, run through python3
    /// so a pip script directory missing from PATH does not matter.
    pub fn mllp_send(&self, port: u16, file: &Path) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new("python3");
        cmd.args([
            "-c",
            "import sys; from hl7.client import mllp_send; sys.argv[0] = 'mllp_send'; mllp_send()",
            "--loose",
            "--file",
        ])
        .arg(file)
        .args(["--port", &port.to_string(), "127.0.0.1"])
        .timeout(WAIT);
        cmd
    }

    /// The asyncio client script: sends the messages of `file` (blank-line separated).
    pub fn asyncio_client(&self, port: u16, file: &Path) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new("python3");
        cmd.arg(self.script("client.py"))
            .arg(port.to_string())
            .arg(file)
            .timeout(WAIT);
        cmd
    }
}

impl InteropPeer for PythonPeer {
    /// The asyncio server.
    fn server(&self, code: &str) -> LineServer {
        let mut cmd = Command::new("python3");
        cmd.arg(self.script("server.py")).arg(code);
        LineServer::start(cmd, "python-hl7 server")
    }
}
