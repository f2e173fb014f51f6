//! A small unified diff for `--dry-run`: config files are a few hundred
//! lines at most, so a plain LCS over the lines that differ is enough and
//! spares a dependency.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Same,
    Del,
    Add,
}

/// Lines in the middle larger than this product are shown as replaced
/// whole rather than aligned (bounds the LCS table).
const MAX_CELLS: usize = 4_000_000;

/// The unified diff (3 lines of context) from `old` to `new`, with
/// `---`/`+++` headers naming the files; empty when they are equal.
///
/// ```ignore
/// let d = unified("a\nb\n", "a\nc\n", "x", "x");
/// assert!(d.contains("-b\n+c\n"));
/// ```
pub(crate) fn unified(old: &str, new: &str, old_name: &str, new_name: &str) -> String {
    if old == new {
        return String::new();
    }
    let a: Vec<&str> = old.split_inclusive('\n').collect();
    let b: Vec<&str> = new.split_inclusive('\n').collect();
    let ops = align(&a, &b);
    let mut out = format!("--- {old_name}\n+++ {new_name}\n");
    // Positions in a and b of each op.
    let mut pos = Vec::with_capacity(ops.len());
    let (mut i, mut j) = (0usize, 0usize);
    for op in &ops {
        pos.push((i, j));
        match op {
            Op::Same => {
                i += 1;
                j += 1;
            }
            Op::Del => i += 1,
            Op::Add => j += 1,
        }
    }
    const CONTEXT: usize = 3;
    let changed: Vec<usize> = (0..ops.len()).filter(|k| ops[*k] != Op::Same).collect();
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(CONTEXT);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 2 * CONTEXT + 1 {
            end = changed[k];
            k += 1;
        }
        let end = (end + CONTEXT + 1).min(ops.len());
        let (a0, b0) = pos[start];
        let a_len = ops[start..end].iter().filter(|o| **o != Op::Add).count();
        let b_len = ops[start..end].iter().filter(|o| **o != Op::Del).count();
        let range = |s: usize, n: usize| {
            if n == 0 {
                format!("{s},0")
            } else if n == 1 {
                format!("{}", s + 1)
            } else {
                format!("{},{n}", s + 1)
            }
        };
        out.push_str(&format!(
            "@@ -{} +{} @@\n",
            range(a0, a_len),
            range(b0, b_len)
        ));
        for (n, op) in ops[start..end].iter().enumerate() {
            let (ai, bj) = pos[start + n];
            let (mark, line) = match op {
                Op::Same => (' ', a[ai]),
                Op::Del => ('-', a[ai]),
                Op::Add => ('+', b[bj]),
            };
            out.push(mark);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

fn align(a: &[&str], b: &[&str]) -> Vec<Op> {
    let pre = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suf = a[pre..]
        .iter()
        .rev()
        .zip(b[pre..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let (am, bm) = (&a[pre..a.len() - suf], &b[pre..b.len() - suf]);
    let mut ops = vec![Op::Same; pre];
    if am.len().saturating_mul(bm.len()) > MAX_CELLS {
        ops.extend(std::iter::repeat_n(Op::Del, am.len()));
        ops.extend(std::iter::repeat_n(Op::Add, bm.len()));
    } else {
        // lcs[i][j]: LCS length of am[i..] and bm[j..].
        let w = bm.len() + 1;
        let mut lcs = vec![0u32; (am.len() + 1) * w];
        for i in (0..am.len()).rev() {
            for j in (0..bm.len()).rev() {
                lcs[i * w + j] = if am[i] == bm[j] {
                    lcs[(i + 1) * w + j + 1] + 1
                } else {
                    lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < am.len() || j < bm.len() {
            if i < am.len() && j < bm.len() && am[i] == bm[j] {
                ops.push(Op::Same);
                i += 1;
                j += 1;
            } else if j < bm.len() && (i == am.len() || lcs[i * w + j + 1] > lcs[(i + 1) * w + j]) {
                ops.push(Op::Add);
                j += 1;
            } else {
                ops.push(Op::Del);
                i += 1;
            }
        }
    }
    ops.extend(std::iter::repeat_n(Op::Same, suf));
    ops
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_shows_with_context() {
        let old = "1\n2\n3\n4\n5\n6\n7\n8\n9\n";
        let new = "1\n2\n3\n4\nfive\n6\n7\n8\n9\n";
        let d = unified(old, new, "a/f", "b/f");
        assert_eq!(
            d,
            "--- a/f\n+++ b/f\n@@ -2,7 +2,7 @@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
        );
    }

    #[test]
    fn creation_deletion_and_missing_newlines() {
        assert_eq!(
            unified("", "a\n", "/dev/null", "f"),
            "--- /dev/null\n+++ f\n@@ -0,0 +1 @@\n+a\n"
        );
        assert_eq!(
            unified("a\n", "", "f", "/dev/null"),
            "--- f\n+++ /dev/null\n@@ -1 +0,0 @@\n-a\n"
        );
        let d = unified("a", "b", "f", "f");
        assert!(d.contains("-a\n\\ No newline at end of file\n+b\n"), "{d}");
        assert_eq!(unified("same", "same", "f", "f"), "");
    }

    #[test]
    fn far_apart_changes_make_two_hunks() {
        let old: String = (0..30).map(|i| format!("{i}\n")).collect();
        let new: String = (0..30)
            .map(|i| match i {
                3 => "x\n".to_string(),
                25 => "y\n".to_string(),
                i => format!("{i}\n"),
            })
            .collect();
        let d = unified(&old, &new, "f", "f");
        assert_eq!(d.matches("@@ -").count(), 2, "{d}");
    }
}
