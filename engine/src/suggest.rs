//! "Did you mean" suggestions for misspelled names (events, keys, oracles).

/// Returns the candidate closest to `input` by edit distance, if it is close
/// enough to be a plausible typo.
///
/// Comparison ignores ASCII case and treats `_` like `-`, so `Pre_Tool_Use`
/// still suggests `pre-tool-use`.
///
/// ```
/// use ahp_engine::suggest::did_you_mean;
/// assert_eq!(did_you_mean("pre-tool-us", ["pre-tool-use", "post-tool-use"]), Some("pre-tool-use"));
/// assert_eq!(did_you_mean("zzz", ["pre-tool-use"]), None);
/// ```
pub fn did_you_mean<'a, I>(input: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let norm = normalize(input);
    let mut best: Option<(usize, &'a str)> = None;
    for cand in candidates {
        let d = levenshtein(&norm, &normalize(cand));
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, cand));
        }
    }
    let (d, cand) = best?;
    // A third of the input's length, at least 1 and at most 4 edits: close
    // enough to be a typo, far enough not to suggest nonsense.
    let limit = (norm.chars().count() / 3).clamp(1, 4);
    (d <= limit).then_some(cand)
}

/// Like [`did_you_mean`], and also suggests a known key that `input`
/// abbreviates (`resolution` → `resolution_path`).
///
/// ```
/// use ahp_engine::suggest::suggest_key;
/// assert_eq!(suggest_key("resolution", &["message", "resolution_path"]), Some("resolution_path"));
/// assert_eq!(suggest_key("mesage", &["message"]), Some("message"));
/// ```
pub fn suggest_key<'k>(input: &str, known: &[&'k str]) -> Option<&'k str> {
    did_you_mean(input, known.iter().copied()).or_else(|| {
        let lower = input.to_ascii_lowercase();
        if lower.chars().count() < 4 {
            return None;
        }
        known
            .iter()
            .copied()
            .find(|k| k.starts_with(lower.as_str()))
    })
}

fn normalize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c == '_' {
                '-'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

/// Edit distance counting insertions, deletions, substitutions and
/// transpositions of neighbours (optimal string alignment), on chars: the
/// typos people make.
pub fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        d[i * w] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j - 1] + cost)
                .min(d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_basics() {
        assert_eq!(levenshtein("kitten", "sitting"), 3);
        assert_eq!(levenshtein("", "abc"), 3);
        assert_eq!(levenshtein("same", "same"), 0);
        assert_eq!(levenshtein("alpah", "alpha"), 1);
    }

    #[test]
    fn suggests_close_names_only() {
        let keys = ["priority", "oracle", "enabled"];
        assert_eq!(did_you_mean("priorty", keys), Some("priority"));
        assert_eq!(did_you_mean("oracel", keys), Some("oracle"));
        assert_eq!(did_you_mean("completely-different", keys), None);
    }
}
