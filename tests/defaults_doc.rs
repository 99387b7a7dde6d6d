//! The defaults the protocol of docs/models.md §9 chose are the ones the models run with: every
//! row of §9's "Defaults" table (between the `defaults-table` markers) names a model, one of its
//! parameters and a value, and that value must be the parameter's default in the model's table;
//! every registered model has a row ("—" for a model with nothing to choose). A default changed
//! in code without the document (or the other way round) fails here, naming the model.
#![expect(clippy::expect_used, reason = "test helpers fail loudly")]

use nmf_playground::engine::models::{ModelKind, ParamValue};
use std::collections::BTreeSet;
use std::path::Path;

/// The rows of the marked table: (model, parameter, value as written).
fn rows(doc: &str) -> Vec<(String, String, String)> {
    let start = doc
        .find("<!-- defaults-table -->")
        .expect("docs/models.md §9 has the <!-- defaults-table --> marker");
    let end = doc[start..]
        .find("<!-- /defaults-table -->")
        .expect("and its closing marker")
        + start;
    doc[start..end]
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---") && !l.starts_with("| model"))
        .map(|l| {
            let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
            assert!(
                cells.len() >= 3,
                "a defaults row needs model | parameter | default: {l}"
            );
            let value = cells[2].trim_matches('*').to_owned();
            (cells[0].to_owned(), cells[1].to_owned(), value)
        })
        .collect()
}

fn matches(value: &ParamValue, written: &str) -> bool {
    match value {
        ParamValue::Number(v) => written
            .replace('−', "-")
            .parse::<f64>()
            .is_ok_and(|w| (w - v).abs() <= 1e-12 * v.abs().max(1.0)),
        ParamValue::Flag(b) => written == if *b { "on" } else { "off" },
        ParamValue::Choice(c) => written == *c,
    }
}

#[test]
fn every_model_runs_with_the_defaults_docs_models_section_9_lists() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/models.md");
    let doc = std::fs::read_to_string(&path).expect("docs/models.md");
    let rows = rows(&doc);
    let mut seen = BTreeSet::new();
    let mut wrong = Vec::new();
    for (model, param, written) in &rows {
        let kind = ModelKind::from_name(model)
            .unwrap_or_else(|| panic!("§9 defaults table: unknown model `{model}`"));
        seen.insert(kind.name());
        if param == "—" {
            assert!(
                kind.hyperparameters().is_empty(),
                "§9 says {model} has nothing to choose, but it has parameters"
            );
            continue;
        }
        let hp = kind
            .param(param)
            .unwrap_or_else(|| panic!("§9 defaults table: {model} has no parameter `{param}`"));
        let value = hp.default_value();
        if !matches(&value, written) {
            wrong.push(format!(
                "{model} {param}: §9 says {written}, the code {value:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "defaults differ from §9: {wrong:?}");
    let missing: Vec<&str> = ModelKind::all()
        .map(ModelKind::name)
        .filter(|n| !seen.contains(n))
        .collect();
    assert!(missing.is_empty(), "§9's defaults table lacks {missing:?}");
    // The table is read, not skipped: at least one row per model.
    assert!(rows.len() >= ModelKind::all().count());
}
