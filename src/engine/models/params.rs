//! Hyperparameters: each model's table ([`HyperParam`]: name, kind with its one default and
//! one range or set of values, the paper's grid, help), the values a spec carries
//! ([`ParamValue`]), and the checked table a model builds its typed parameters from
//! ([`Checked`]). Every value is checked here, once, against its table entry; models read
//! numbers, `bool` flags and enum choices and never check ranges again.

use super::ModelError;
use serde::de::DeserializeOwned;
use serde::{Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::ops::RangeInclusive;

/// One named option of a choice parameter (e.g. GNMF's `weight=heat`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChoiceOption {
    pub name: &'static str,
    pub help: &'static str,
}

impl ChoiceOption {
    /// An option with its tooltip text.
    pub const fn new(name: &'static str, help: &'static str) -> Self {
        Self { name, help }
    }
}

/// What kind of value a hyperparameter takes, with its default and its range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamKind {
    /// A real number in `[min, max]`; `log_scale` drags it on a log scale in the GUI (a
    /// minimum of 0 is then reached by the widget's own "0" control); `grid` is the paper's
    /// grid, offered as presets and used by `sweep` when asked.
    Number {
        default: f64,
        min: f64,
        max: f64,
        log_scale: bool,
        grid: &'static [f64],
    },
    /// A whole number in `[min, max]` (a neighbour count, a number of rounds or iterations):
    /// held as a [`ParamValue::Number`] that is integral, shown and typed without decimals,
    /// and a fractional value is refused. `grid` as for `Number`.
    Count {
        default: u32,
        min: u32,
        max: u32,
        grid: &'static [u32],
    },
    /// On or off (a checkbox; `NAME=on|off|true|false|1|0` on the command line).
    Flag { default: bool },
    /// One of named values (a combo box; `NAME=option` on the command line).
    Choice {
        default: &'static str,
        options: &'static [ChoiceOption],
    },
}

/// A model's hyperparameter: its name (as used by `--param NAME=VALUE`), kind and the text
/// the GUI shows in its tooltip (citing the docs/models.md section).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HyperParam {
    pub name: &'static str,
    pub kind: ParamKind,
    pub help: &'static str,
}

impl HyperParam {
    /// A real number in `range`, dragged on a linear scale, without a grid or help (see
    /// [`Self::log`], [`Self::with_grid`], [`Self::help`]). A table row reads
    /// `HyperParam::number("beta", 0.1, 0.0..=1e6).log().with_grid(&[…]).help("…")`.
    pub const fn number(name: &'static str, default: f64, range: RangeInclusive<f64>) -> Self {
        let (min, max) = (*range.start(), *range.end());
        let kind = ParamKind::Number {
            default,
            min,
            max,
            log_scale: false,
            grid: &[],
        };
        Self::of(name, kind)
    }

    /// A whole number in `range` with the paper's `grid`.
    pub const fn count(
        name: &'static str,
        default: u32,
        range: RangeInclusive<u32>,
        grid: &'static [u32],
    ) -> Self {
        let (min, max) = (*range.start(), *range.end());
        Self::of(
            name,
            ParamKind::Count {
                default,
                min,
                max,
                grid,
            },
        )
    }

    /// An on/off flag.
    pub const fn flag(name: &'static str, default: bool) -> Self {
        Self::of(name, ParamKind::Flag { default })
    }

    /// One of the named `options`.
    pub const fn choice(
        name: &'static str,
        default: &'static str,
        options: &'static [ChoiceOption],
    ) -> Self {
        Self::of(name, ParamKind::Choice { default, options })
    }

    const fn of(name: &'static str, kind: ParamKind) -> Self {
        Self {
            name,
            kind,
            help: "",
        }
    }

    /// A number dragged on a log scale (a table error, refused at compile time, on any other
    /// kind).
    pub const fn log(mut self) -> Self {
        match &mut self.kind {
            ParamKind::Number { log_scale, .. } => *log_scale = true,
            _ => panic!("only a number has a log scale"),
        }
        self
    }

    /// A number's grid (the paper's values, offered as presets and swept when asked).
    pub const fn with_grid(mut self, values: &'static [f64]) -> Self {
        match &mut self.kind {
            ParamKind::Number { grid, .. } => *grid = values,
            _ => panic!("a count's grid is given with the count"),
        }
        self
    }

    /// The tooltip text (citing the docs/models.md section).
    pub const fn help(mut self, help: &'static str) -> Self {
        self.help = help;
        self
    }

    /// The default value.
    pub fn default_value(&self) -> ParamValue {
        match self.kind {
            ParamKind::Number { default, .. } => ParamValue::Number(default),
            ParamKind::Count { default, .. } => ParamValue::Number(f64::from(default)),
            ParamKind::Flag { default } => ParamValue::Flag(default),
            ParamKind::Choice { default, .. } => ParamValue::Choice(default),
        }
    }

    /// The values `sweep` and the GUI offer as presets: the paper's grid for numbers, both
    /// states for flags, every option for choices.
    pub fn grid(&self) -> Vec<ParamValue> {
        match self.kind {
            ParamKind::Number { grid, .. } => grid.iter().map(|&v| ParamValue::Number(v)).collect(),
            ParamKind::Count { grid, .. } => grid
                .iter()
                .map(|&v| ParamValue::Number(f64::from(v)))
                .collect(),
            ParamKind::Flag { .. } => vec![ParamValue::Flag(false), ParamValue::Flag(true)],
            ParamKind::Choice { options, .. } => {
                options.iter().map(|o| ParamValue::Choice(o.name)).collect()
            }
        }
    }

    /// What the value must be, for error messages and `--help`.
    pub fn domain(&self) -> String {
        match self.kind {
            ParamKind::Number { min, max, .. } => format!("a number in [{min}, {max}]"),
            ParamKind::Count { min, max, .. } => format!("a whole number in [{min}, {max}]"),
            ParamKind::Flag { .. } => "on or off".into(),
            ParamKind::Choice { options, .. } => {
                let names: Vec<_> = options.iter().map(|o| o.name).collect();
                format!("one of {}", names.join(", "))
            }
        }
    }

    /// Check a value against this entry: a number within the range, a flag (also given as the
    /// number 0 or 1, as older settings files stored flags), or one of the options.
    pub fn check(&self, model: &'static str, value: ParamValue) -> Result<ParamValue, ModelError> {
        let invalid = |why: String| ModelError::InvalidParam {
            model,
            name: self.name.to_owned(),
            why,
        };
        match (self.kind, value) {
            (ParamKind::Number { min, max, .. }, ParamValue::Number(v)) => {
                if v.is_finite() && (min..=max).contains(&v) {
                    Ok(value)
                } else {
                    Err(invalid(format!("= {v} is outside [{min}, {max}]")))
                }
            }
            (ParamKind::Count { min, max, .. }, ParamValue::Number(v)) => {
                if !v.is_finite() || v.fract() != 0.0 {
                    Err(invalid(format!("= {v} is not a whole number")))
                } else if !(f64::from(min)..=f64::from(max)).contains(&v) {
                    Err(invalid(format!("= {v} is outside [{min}, {max}]")))
                } else {
                    Ok(value)
                }
            }
            (ParamKind::Flag { .. }, ParamValue::Flag(_)) => Ok(value),
            (ParamKind::Flag { .. }, ParamValue::Number(v)) if v == 0.0 || v == 1.0 => {
                Ok(ParamValue::Flag(v == 1.0))
            }
            (ParamKind::Choice { options, .. }, ParamValue::Choice(c))
                if options.iter().any(|o| o.name == c) =>
            {
                Ok(value)
            }
            _ => Err(invalid(format!("= {value} must be {}", self.domain()))),
        }
    }

    /// Parse a value typed on the command line (`--param`, `--grid`) for this entry.
    pub fn parse(&self, model: &'static str, text: &str) -> Result<ParamValue, ModelError> {
        let t = text.trim();
        let invalid = || ModelError::InvalidParam {
            model,
            name: self.name.to_owned(),
            why: format!("= `{t}` is not {}", self.domain()),
        };
        let value = match self.kind {
            ParamKind::Number { .. } | ParamKind::Count { .. } => {
                ParamValue::Number(t.parse().map_err(|_| invalid())?)
            }
            ParamKind::Flag { .. } => match t.to_ascii_lowercase().as_str() {
                "1" | "on" | "true" | "yes" => ParamValue::Flag(true),
                "0" | "off" | "false" | "no" => ParamValue::Flag(false),
                _ => return Err(invalid()),
            },
            ParamKind::Choice { options, .. } => ParamValue::Choice(
                options
                    .iter()
                    .find(|o| o.name.eq_ignore_ascii_case(t))
                    .ok_or_else(invalid)?
                    .name,
            ),
        };
        self.check(model, value)
    }
}

/// A hyperparameter value. Copy: choice values are the `'static` option names of the table
/// (a value read from a file is matched to them by the registry, which implements
/// `Deserialize` for this type).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ParamValue {
    Number(f64),
    Flag(bool),
    Choice(&'static str),
}

impl fmt::Display for ParamValue {
    /// Numbers in Rust's shortest round-trip form, flags as 1/0 (as `sweep`'s files and the
    /// run history have always written them), choices by name.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParamValue::Number(v) => write!(f, "{v}"),
            ParamValue::Flag(b) => write!(f, "{}", u8::from(*b)),
            ParamValue::Choice(c) => f.write_str(c),
        }
    }
}

impl Serialize for ParamValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ParamValue::Number(v) => s.serialize_f64(*v),
            ParamValue::Flag(b) => s.serialize_bool(*b),
            ParamValue::Choice(c) => s.serialize_str(c),
        }
    }
}

/// A named set of values shown as a one-click preset (e.g. RPNMF's "paper" setting).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Preset {
    pub name: &'static str,
    pub help: &'static str,
    pub values: &'static [(&'static str, ParamValue)],
}

/// Every hyperparameter of one model with the value a spec uses (given or default), each
/// checked once against its table entry. Models build their typed parameters from this.
#[derive(Clone, Debug, PartialEq)]
pub struct Checked {
    model: &'static str,
    table: &'static [HyperParam],
    values: BTreeMap<&'static str, ParamValue>,
}

impl Checked {
    /// Check `given` against `table`: unknown names and bad values are refused; missing ones
    /// take their defaults.
    pub fn new(
        model: &'static str,
        table: &'static [HyperParam],
        given: &BTreeMap<String, ParamValue>,
    ) -> Result<Self, ModelError> {
        for name in given.keys() {
            if !table.iter().any(|hp| hp.name == name) {
                return Err(ModelError::UnknownParam {
                    model,
                    name: name.clone(),
                    known: if table.is_empty() {
                        "none".into()
                    } else {
                        table.iter().map(|h| h.name).collect::<Vec<_>>().join(", ")
                    },
                });
            }
        }
        let mut values = BTreeMap::new();
        for hp in table {
            let v = match given.get(hp.name) {
                Some(&v) => hp.check(model, v)?,
                None => hp.default_value(),
            };
            values.insert(hp.name, v);
        }
        Ok(Self {
            model,
            table,
            values,
        })
    }

    /// The model's typed parameters, read by field name (serde's `Deserialize`): a number as
    /// `f64`, a count as `usize`, a flag as `bool`, a choice as an enum whose variants are the
    /// option names. Every value was checked against the table already; an error here means
    /// the struct does not match its table.
    pub fn typed<T: DeserializeOwned>(&self) -> Result<T, ModelError> {
        use serde_json::Value;
        let fields: serde_json::Map<String, Value> = self
            .table
            .iter()
            .map(|hp| {
                let value = match (hp.kind, self.values.get(hp.name)) {
                    (ParamKind::Count { .. }, Some(&ParamValue::Number(v))) => {
                        Value::from(v as u64)
                    }
                    (_, Some(&ParamValue::Number(v))) => Value::from(v),
                    (_, Some(&ParamValue::Flag(b))) => Value::from(b),
                    (_, Some(&ParamValue::Choice(c))) => Value::from(c),
                    (_, None) => Value::Null,
                };
                (hp.name.to_owned(), value)
            })
            .collect();
        serde_json::from_value(Value::Object(fields)).map_err(|e| ModelError::InvalidParam {
            model: self.model,
            name: std::any::type_name::<T>().to_owned(),
            why: format!("does not match the model's table: {e}"),
        })
    }

    /// Every value by name (for reports).
    pub fn values(&self) -> &BTreeMap<&'static str, ParamValue> {
        &self.values
    }

    fn get(&self, name: &str) -> Result<ParamValue, ModelError> {
        self.values
            .get(name)
            .copied()
            .ok_or_else(|| ModelError::UnknownParam {
                model: self.model,
                name: name.to_owned(),
                known: self.values.keys().copied().collect::<Vec<_>>().join(", "),
            })
    }

    fn mismatch(&self, name: &str, want: &str) -> ModelError {
        ModelError::InvalidParam {
            model: self.model,
            name: name.to_owned(),
            why: format!("is not {want} in the model's table"),
        }
    }

    /// A number parameter.
    pub fn number(&self, name: &str) -> Result<f64, ModelError> {
        match self.get(name)? {
            ParamValue::Number(v) => Ok(v),
            _ => Err(self.mismatch(name, "a number")),
        }
    }

    /// A whole-number parameter as a usize. A [`ParamKind::Count`] was checked integral and in
    /// range with the table; a fraction is still refused here, should a model ask for a
    /// count of a parameter its table declares as a plain number.
    pub fn count(&self, name: &str) -> Result<usize, ModelError> {
        let v = self.number(name)?;
        if v.fract() != 0.0 || v < 0.0 {
            return Err(ModelError::InvalidParam {
                model: self.model,
                name: name.into(),
                why: format!("= {v} is not a whole number"),
            });
        }
        Ok(v as usize)
    }

    /// A flag parameter.
    pub fn flag(&self, name: &str) -> Result<bool, ModelError> {
        match self.get(name)? {
            ParamValue::Flag(b) => Ok(b),
            _ => Err(self.mismatch(name, "a flag")),
        }
    }

    /// A choice parameter as the model's enum: `named` pairs each option name with its value.
    pub fn choice<T: Copy>(&self, name: &str, named: &[(&str, T)]) -> Result<T, ModelError> {
        match self.get(name)? {
            ParamValue::Choice(c) => named
                .iter()
                .find(|(n, _)| *n == c)
                .map(|&(_, v)| v)
                .ok_or_else(|| self.mismatch(name, "a known option")),
            _ => Err(self.mismatch(name, "a choice")),
        }
    }
}

/// `from_checked` and `defaults` of a model's typed parameters (a `Deserialize` struct whose
/// fields are named as its table's rows, [`Checked::typed`]): `typed_params!(FnmfParams, KIND)`.
macro_rules! typed_params {
    ($params:ty, $kind:expr) => {
        impl $params {
            /// The typed parameters of a checked table.
            pub fn from_checked(p: &$crate::engine::models::Checked) -> Result<Self, ModelError> {
                p.typed()
            }

            /// The defaults of the table.
            pub fn defaults() -> Result<Self, ModelError> {
                let kind = $kind;
                let none = &Default::default();
                Self::from_checked(&Checked::new(kind.label(), kind.hyperparameters(), none)?)
            }
        }
    };
}
pub(crate) use typed_params;

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &[HyperParam] = &[
        HyperParam {
            name: "alpha",
            kind: ParamKind::Number {
                default: 0.5,
                min: 0.0,
                max: 10.0,
                log_scale: true,
                grid: &[0.1, 1.0],
            },
            help: "",
        },
        HyperParam {
            name: "on",
            kind: ParamKind::Flag { default: true },
            help: "",
        },
        HyperParam {
            name: "weight",
            kind: ParamKind::Choice {
                default: "binary",
                options: &[
                    ChoiceOption {
                        name: "binary",
                        help: "",
                    },
                    ChoiceOption {
                        name: "heat",
                        help: "",
                    },
                ],
            },
            help: "",
        },
    ];

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Weight {
        Binary,
        Heat,
    }

    #[test]
    fn a_count_takes_whole_numbers_in_its_range_only() {
        let hp = HyperParam {
            name: "neighbors",
            kind: ParamKind::Count {
                default: 5,
                min: 1,
                max: 100,
                grid: &[3, 5],
            },
            help: "",
        };
        assert_eq!(hp.default_value(), ParamValue::Number(5.0));
        assert_eq!(
            hp.grid(),
            [ParamValue::Number(3.0), ParamValue::Number(5.0)]
        );
        assert_eq!(hp.parse("M", " 12 ").unwrap(), ParamValue::Number(12.0));
        let e = hp.parse("M", "10.5").unwrap_err().to_string();
        assert!(
            e.contains("`neighbors`") && e.contains("10.5 is not a whole number"),
            "{e}"
        );
        let e = hp.parse("M", "0").unwrap_err().to_string();
        assert!(e.contains("0 is outside [1, 100]"), "{e}");
        assert_eq!(hp.domain(), "a whole number in [1, 100]");
    }

    #[test]
    fn defaults_fill_in_and_typed_values_come_out() {
        let c = Checked::new("T", TABLE, &BTreeMap::new()).unwrap();
        assert_eq!(c.number("alpha").unwrap(), 0.5);
        assert!(c.flag("on").unwrap());
        let w = [("binary", Weight::Binary), ("heat", Weight::Heat)];
        assert_eq!(c.choice("weight", &w).unwrap(), Weight::Binary);
        let mut given = BTreeMap::new();
        given.insert("weight".to_owned(), TABLE[2].parse("T", "HEAT").unwrap());
        given.insert("on".to_owned(), ParamValue::Number(0.0));
        let c = Checked::new("T", TABLE, &given).unwrap();
        assert_eq!(c.choice("weight", &w).unwrap(), Weight::Heat);
        assert!(!c.flag("on").unwrap(), "a stored 0 is off");
        assert!(c.number("on").is_err(), "a flag is not a number");
    }

    #[test]
    fn bad_values_and_names_are_refused_with_the_rule() {
        let e = TABLE[0].parse("T", "11").unwrap_err().to_string();
        assert!(e.contains("outside [0, 10]"), "{e}");
        assert!(TABLE[0].parse("T", "x").is_err());
        assert!(TABLE[0].parse("T", "NaN").is_err());
        let e = TABLE[1].parse("T", "2").unwrap_err().to_string();
        assert!(e.contains("on or off"), "{e}");
        let e = TABLE[2].parse("T", "cosine").unwrap_err().to_string();
        assert!(e.contains("one of binary, heat"), "{e}");
        let mut given = BTreeMap::new();
        given.insert("beta".to_owned(), ParamValue::Number(1.0));
        let e = Checked::new("T", TABLE, &given).unwrap_err().to_string();
        assert!(e.contains("known: alpha, on, weight"), "{e}");
    }

    /// Every registered table accepts its defaults and grids and refuses each value outside a
    /// rule with a message naming the parameter and the rule.
    #[test]
    fn every_registered_table_enforces_its_rules() {
        use crate::engine::models::{ModelKind, ModelSpec};
        for kind in ModelKind::all() {
            let model = kind.label();
            for hp in kind.hyperparameters() {
                let refused = |text: &str, want: &str| {
                    let e = hp.parse(model, text).unwrap_err().to_string();
                    let named = e.contains(&format!("`{}`", hp.name));
                    assert!(named && e.contains(want), "{model} {text}: {e}");
                };
                assert_eq!(
                    hp.check(model, hp.default_value()).unwrap(),
                    hp.default_value()
                );
                for v in hp.grid() {
                    assert!(hp.check(model, v).is_ok(), "{model} {}: grid {v}", hp.name);
                }
                match hp.kind {
                    ParamKind::Number { min, max, .. } => {
                        let rule = format!("outside [{min}, {max}]");
                        refused(&(min - 1.0).to_string(), &rule);
                        refused(&(2.0 * max + 1.0).to_string(), &rule);
                        refused("NaN", "outside");
                        refused("x", "is not a number");
                    }
                    ParamKind::Count { min, max, .. } => {
                        let rule = format!("outside [{min}, {max}]");
                        if min > 0 {
                            refused(&(min - 1).to_string(), &rule);
                        }
                        refused(&(max + 1).to_string(), &rule);
                        refused("2.5", "2.5 is not a whole number");
                        let spec =
                            ModelSpec::new(kind, 2, 0).with(hp.name, ParamValue::Number(2.5));
                        let e = spec.checked().unwrap_err().to_string();
                        assert!(e.contains("not a whole number"), "{model}: {e}");
                    }
                    ParamKind::Flag { .. } => {
                        refused("2", "on or off");
                        assert_eq!(hp.parse(model, "on").unwrap(), ParamValue::Flag(true));
                    }
                    ParamKind::Choice { options, .. } => {
                        let names: Vec<_> = options.iter().map(|o| o.name).collect();
                        refused("no-such-option", &format!("one of {}", names.join(", ")));
                    }
                }
            }
        }
    }

    #[test]
    fn values_print_and_serialize_as_before() {
        assert_eq!(ParamValue::Number(0.1).to_string(), "0.1");
        assert_eq!(ParamValue::Flag(true).to_string(), "1");
        assert_eq!(
            serde_json::to_string(&ParamValue::Flag(false)).unwrap(),
            "false"
        );
        let v: ParamValue = serde_json::from_str("2.5").unwrap();
        assert_eq!(v, ParamValue::Number(2.5));
        assert!(serde_json::from_str::<ParamValue>("\"no-such-option\"").is_err());
    }
}
