//! A small terminal for tests: replays what a program wrote to a pseudo-terminal of a given
//! width (printable text, CR, LF, and the cursor and erase sequences progress bars use) and
//! keeps the resulting screen, plus how often a line ran past the right edge.

pub struct Screen {
    width: usize,
    lines: Vec<Vec<char>>,
    row: usize,
    col: usize,
    /// Times the text ran past the right edge and the terminal wrapped it.
    pub wraps: usize,
}

impl Screen {
    pub fn replay(bytes: &[u8], width: usize) -> Screen {
        let mut screen = Screen {
            width,
            lines: vec![Vec::new()],
            row: 0,
            col: 0,
            wraps: 0,
        };
        let text = String::from_utf8_lossy(bytes);
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\r' => screen.col = 0,
                '\n' => screen.down(1),
                '\x1b' => {
                    if chars.peek() != Some(&'[') {
                        chars.next();
                        continue;
                    }
                    chars.next();
                    let mut params = String::new();
                    let mut command = ' ';
                    for p in chars.by_ref() {
                        if p.is_ascii_alphabetic() || p == '@' || p == '~' {
                            command = p;
                            break;
                        }
                        params.push(p);
                    }
                    screen.csi(&params, command);
                }
                c if c.is_control() => {}
                c => screen.put(c),
            }
        }
        screen
    }

    fn down(&mut self, n: usize) {
        self.row += n;
        while self.lines.len() <= self.row {
            self.lines.push(Vec::new());
        }
    }

    fn put(&mut self, c: char) {
        if self.col >= self.width {
            self.wraps += 1;
            self.col = 0;
            self.down(1);
        }
        let line = &mut self.lines[self.row];
        while line.len() < self.col {
            line.push(' ');
        }
        if line.len() == self.col {
            line.push(c);
        } else {
            line[self.col] = c;
        }
        self.col += 1;
    }

    fn csi(&mut self, params: &str, command: char) {
        let n = params
            .trim_start_matches('?')
            .split(';')
            .next()
            .and_then(|p| p.parse::<usize>().ok());
        match command {
            'A' => self.row = self.row.saturating_sub(n.unwrap_or(1)),
            'B' => self.down(n.unwrap_or(1)),
            'C' => self.col = (self.col + n.unwrap_or(1)).min(self.width),
            'D' => self.col = self.col.saturating_sub(n.unwrap_or(1)),
            'G' => self.col = n.unwrap_or(1).saturating_sub(1),
            'K' => {
                let line = &mut self.lines[self.row];
                match n.unwrap_or(0) {
                    0 => line.truncate(self.col),
                    1 => line.iter_mut().take(self.col + 1).for_each(|c| *c = ' '),
                    _ => line.clear(),
                }
            }
            'J' => {
                self.lines[self.row].truncate(self.col);
                self.lines.truncate(self.row + 1);
            }
            _ => {} // colours, cursor visibility
        }
    }

    /// The screen's lines, trailing blanks trimmed, empty lines at the end dropped.
    pub fn lines(&self) -> Vec<String> {
        let mut lines: Vec<String> = self
            .lines
            .iter()
            .map(|l| l.iter().collect::<String>().trim_end().to_string())
            .collect();
        while lines.last().is_some_and(|l| l.is_empty()) {
            lines.pop();
        }
        lines
    }
}

/// Runs `command` (a shell command line) under `script` in a pseudo-terminal of `cols`
/// columns; returns its exit code and every byte it wrote to the terminal.
pub fn in_terminal(command: &str, cols: usize) -> (i32, Vec<u8>) {
    let line = format!("stty cols {cols} rows 40; exec {command}");
    let out = std::process::Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("script(1) runs");
    (out.status.code().unwrap_or(-1), out.stdout)
}
