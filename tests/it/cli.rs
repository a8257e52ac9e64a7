//! Integration tests: the command line as a whole (help, generated files).

use crate::support::{mllp, repo_root};
use std::path::Path;

/// Compare a generated file with its committed copy; with `MLLP_UPDATE_GENERATED=1`, rewrite it.
fn ensure_file_contents(path: &Path, contents: &[u8]) {
    let update = std::env::var_os("MLLP_UPDATE_GENERATED").is_some();
    let current = std::fs::read(path).unwrap_or_default();
    if current == contents {
        return;
    }
    if update {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
        return;
    }
    panic!(
        "{} is stale: run `MLLP_UPDATE_GENERATED=1 cargo test --test it cli::` and commit the result",
        path.display()
    );
}

#[test]
fn help_lists_every_subcommand() {
    let out = mllp().arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for sub in [
        "send",
        "listen",
        "relay",
        "probe",
        "soak",
        "show",
        "check",
        "diff",
        "deid",
        "completions",
        "man",
    ] {
        assert!(text.contains(sub), "--help lacks {sub}");
    }
}

#[test]
fn completions_are_current() {
    let root = repo_root();
    for (shell, file) in [
        ("bash", "mllp.bash"),
        ("zsh", "_mllp"),
        ("fish", "mllp.fish"),
        ("powershell", "_mllp.ps1"),
        ("elvish", "mllp.elv"),
    ] {
        let out = mllp().args(["completions", shell]).output().unwrap();
        assert!(out.status.success());
        ensure_file_contents(&root.join("completions").join(file), &out.stdout);
    }
}

#[test]
fn man_pages_are_current() {
    let dir = tempfile::tempdir().unwrap();
    let out = mllp()
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let mut names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    for sub in [
        "mllp.1",
        "mllp-send.1",
        "mllp-listen.1",
        "mllp-relay.1",
        "mllp-probe.1",
        "mllp-soak.1",
        "mllp-show.1",
        "mllp-check.1",
        "mllp-diff.1",
        "mllp-deid.1",
    ] {
        assert!(names.iter().any(|n| n == sub), "no man page {sub}");
    }
    let root = repo_root();
    for name in &names {
        let generated = std::fs::read(dir.path().join(name)).unwrap();
        ensure_file_contents(&root.join("man").join(name), &generated);
    }
    // A committed page with no generated counterpart is stale too.
    for entry in std::fs::read_dir(root.join("man")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            names.contains(&name),
            "man/{name} is no longer generated: delete it"
        );
    }
}

#[test]
fn every_subcommand_help_has_examples_and_exit_codes() {
    for (sub, codes) in [
        ("send", &["0", "1", "2", "3", "4", "5", "130"][..]),
        ("listen", &["0", "2", "5"][..]),
        ("probe", &["0", "1", "2", "3", "4", "5"][..]),
        ("soak", &["0", "2", "4", "5", "6"][..]),
        ("diff", &["0", "1", "2"][..]),
        ("deid", &["0", "2"][..]),
    ] {
        let out = mllp().args([sub, "--help"]).output().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains("Examples:"), "{sub} --help has no examples");
        let section = text
            .split("Exit codes")
            .nth(1)
            .unwrap_or_else(|| panic!("{sub} --help does not document exit codes"));
        for code in codes {
            assert!(
                section
                    .lines()
                    .any(|l| l.trim_start().starts_with(&format!("{code} "))),
                "{sub} --help does not document exit code {code}"
            );
        }
    }
}

#[test]
fn probe_flags_are_not_filed_under_the_tls_heading() {
    let out = mllp().args(["probe", "--help"]).output().unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let tls_section = text.split("\nTLS:").nth(1).expect("a TLS section");
    let tls_section = tls_section.split("\n\n").next().unwrap();
    for flag in ["--send", "--message", "--banner-wait", "--count", "--json"] {
        assert!(
            !tls_section.contains(flag),
            "{flag} is listed under TLS:\n{tls_section}"
        );
    }
}

/// The text under `heading:` in a help page, up to the next heading.
fn section<'a>(help: &'a str, heading: &str) -> Option<&'a str> {
    let start = help.find(&format!("\n{heading}:\n"))? + heading.len() + 3;
    let rest = &help[start..];
    let is_heading = |l: &str| l.ends_with(':') && l.starts_with(|c: char| c.is_ascii_uppercase());
    let end = rest
        .match_indices('\n')
        .find(|(i, _)| is_heading(rest[i + 1..].lines().next().unwrap_or("")))
        .map_or(rest.len(), |(i, _)| i);
    Some(&rest[..end])
}

#[test]
fn send_help_groups_its_flags_and_keeps_the_global_ones_apart() {
    let out = mllp().args(["send", "--help"]).output().unwrap();
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(
        !help.contains("\nOptions:\n"),
        "flags left under Options:\n{help}"
    );
    let mut last = 0;
    for (heading, flag) in [
        ("Input", "--recursive"),
        ("Connection", "--connect-timeout"),
        ("TLS", "--ca"),
        ("Flow", "--window"),
        ("Output", "--json"),
        ("Global", "--verbose"),
    ] {
        let at = help
            .find(&format!("\n{heading}:\n"))
            .unwrap_or_else(|| panic!("no {heading} heading:\n{help}"));
        assert!(at > last, "{heading} is out of order");
        last = at;
        assert!(
            section(&help, heading).unwrap().contains(flag),
            "{flag} is not under {heading}"
        );
    }
    let global = section(&help, "Global").unwrap();
    for flag in ["--quiet", "--color", "--log-format", "--help", "--version"] {
        assert!(global.contains(flag), "{flag} is not under Global");
    }
}

#[test]
fn short_help_is_one_line_per_flag_with_one_placeholder_style() {
    let allowed = [
        "DURATION",
        "FILE",
        "N",
        "SIZE",
        "RATE",
        "DIR",
        "HOST",
        "HOST[:PORT]",
        "[HOST:]PORT",
        "TIME",
        "MSH-9",
        "ID",
        "PACE",
        "PORT",
        "NAME",
        "WHEN",
        "FORMAT",
        "MODE",
        "FRACTION",
        "FACTOR",
        "SEED",
        "CMD",
        "CODE",
        "CODE[:ERR-3]",
        "ADDR",
        "FAULTS",
        "SHELL",
        "FIELD",
        "URL",
        "CIDR",
        "PATH",
        "FILTER",
        "STATUS",
    ];
    for sub in [
        "send",
        "listen",
        "relay",
        "probe",
        "soak",
        "show",
        "check",
        "man",
        "completions",
    ] {
        let out = mllp()
            .args([sub, "-h"])
            .env("COLUMNS", "100")
            .output()
            .unwrap();
        let help = String::from_utf8(out.stdout).unwrap();
        let flags = help.split("\nExamples:").next().unwrap();
        for line in flags.lines() {
            assert!(
                !line.starts_with("        "),
                "{sub} -h wraps a flag's help:\n{line}\nin\n{help}"
            );
            let mut rest = line;
            while let Some(open) = rest.find(" <") {
                let close = rest[open..].find('>').unwrap() + open;
                let name = &rest[open + 2..close];
                assert!(allowed.contains(&name), "{sub} -h has placeholder <{name}>");
                rest = &rest[close..];
            }
        }
    }
}

#[test]
fn man_pages_have_the_usual_sections() {
    let dir = tempfile::tempdir().unwrap();
    let out = mllp()
        .args(["man", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    for page in [
        "mllp.1",
        "mllp-send.1",
        "mllp-listen.1",
        "mllp-relay.1",
        "mllp-probe.1",
        "mllp-soak.1",
        "mllp-show.1",
        "mllp-check.1",
        "mllp-diff.1",
        "mllp-deid.1",
    ] {
        let text = std::fs::read_to_string(dir.path().join(page)).unwrap();
        let titles: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix(".SH "))
            .map(|t| t.trim_matches('"'))
            .collect();
        let mut last = 0;
        for wanted in [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "OPTIONS",
            "EXIT STATUS",
            "ENVIRONMENT",
            "FILES",
            "EXAMPLES",
        ] {
            let at = titles
                .iter()
                .position(|t| *t == wanted)
                .unwrap_or_else(|| panic!("{page} has no {wanted} section: {titles:?}"));
            assert!(at >= last, "{page}: {wanted} is out of order: {titles:?}");
            last = at;
        }
        assert!(!titles.contains(&"EXTRA"), "{page} has an EXTRA section");
        // Commands that read messages and connect to nothing resolve no names.
        let resolves = !matches!(page, "mllp-diff.1" | "mllp-deid.1");
        assert!(
            !resolves || text.contains("MLLP_HOSTS_FILE"),
            "{page} lacks its environment"
        );
    }
}

#[test]
fn the_quick_start_shows_the_installed_command_too() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let start = readme.find("## Quick start").unwrap();
    let section = &readme[start..start + readme[start..].find("\n## ").unwrap_or(400)];
    assert!(
        section.contains("cargo run --release -- soak --duration 10s"),
        "{section}"
    );
    assert!(section.contains("`mllp soak --duration 10s`"), "{section}");
}
