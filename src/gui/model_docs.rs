//! The sections of `docs/models.md` the model help cites ("Math: docs/models.md §3.1"), built
//! into the binary so that the app shows them where the text is cited, with or without the
//! repository at hand.

/// The project's model documentation, as built.
const MODELS_MD: &str = include_str!("../../docs/models.md");

/// The text of the section a citation such as `docs/models.md §3.1` names: its heading line
/// through the line before the next heading of the same or a higher level. `None` when the
/// citation names no section of the file.
pub fn section(citation: &str) -> Option<&'static str> {
    let number = citation.rsplit('§').next()?.trim();
    if number.is_empty() || citation == number {
        return None;
    }
    let mut start = None;
    let mut level = 0;
    let mut offset = 0;
    for line in MODELS_MD.split_inclusive('\n') {
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if hashes > 0 && line[hashes..].starts_with(' ') {
            let title = line[hashes..].trim_start();
            match start {
                None if title.split_whitespace().next() == Some(number) => {
                    start = Some(offset);
                    level = hashes;
                }
                Some(s) if hashes <= level => return Some(MODELS_MD[s..offset].trim_end()),
                _ => {}
            }
        }
        offset += line.len();
    }
    start.map(|s| MODELS_MD[s..].trim_end())
}

#[cfg(test)]
mod tests {
    use super::section;

    #[test]
    fn a_citation_gives_its_section_and_stops_at_the_next() {
        let nmf = section("docs/models.md §3.1").expect("§3.1");
        assert!(nmf.starts_with("### 3.1 NMF"), "{}", &nmf[..40]);
        assert!(!nmf.contains("### 3.2"), "stops before §3.2");
        // A chapter runs through its subsections.
        let rpnmf = section("docs/models.md §4").expect("§4");
        assert!(rpnmf.starts_with("## 4 RPNMF") && rpnmf.contains("### 4.2"));
        assert!(!rpnmf.contains("## 5 FNMF"));
        assert!(section("docs/models.md §99").is_none());
        assert!(section("no section").is_none());
    }
}
