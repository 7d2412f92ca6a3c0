//! A run's pin of one of its library's dependencies (`redis==5.0.8`): exact, so that a
//! release's image names what was installed and two runs with different pins never share an
//! image. A run's pin replaces the adapter's own pin of the same package and adds the others
//! (docs/adapters.md, "Which build of the library runs").

use serde::Deserialize;
use std::fmt;

/// `name==version`, as pip reads it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct Pin {
    /// The registry's name of the package, as written.
    pub package: String,
    pub version: String,
}

/// What to write instead of a malformed pin.
const WRITE: &str = "write name==version, e.g. redis==5.0.8";

impl Pin {
    /// Parses `name==version`; the error quotes the text and says what to write instead.
    pub fn parse(text: &str) -> Result<Pin, String> {
        let text = text.trim();
        if text.starts_with('-') || text.contains("://") {
            return Err(format!(
                "`{text}` is an option, not a pin: the host's pip fetches from PyPI with its \
                 own settings; {WRITE}"
            ));
        }
        let Some((package, version)) = text.split_once("==") else {
            let name: String = text.chars().take_while(|c| name_char(*c)).collect();
            let name = if name.is_empty() { "name" } else { &name };
            return Err(match text.find(['=', '<', '>', '~', '!']) {
                None => format!("`{text}` names no version: write {name}==<version>"),
                Some(i) if text[i..].starts_with('=') && !text[i + 1..].contains('=') => {
                    format!(
                        "`{text}` is not a pin: write {name}=={}",
                        text[i + 1..].trim()
                    )
                }
                Some(_) => format!(
                    "`{text}` is not an exact pin: write {name}==<version> (the image's tag \
                     names what was installed)"
                ),
            });
        };
        let (package, version) = (package.trim(), version.trim());
        let package_ok = package.starts_with(|c: char| c.is_ascii_alphanumeric())
            && package.ends_with(|c: char| c.is_ascii_alphanumeric())
            && package.chars().all(name_char);
        if !package_ok {
            return Err(format!(
                "`{text}`: {package:?} is not a package name (letters, digits, `.`, `-`, `_`; \
                 no extras); {WRITE}"
            ));
        }
        let version_ok = !version.is_empty()
            && version.len() <= 64
            && version.starts_with(|c: char| c.is_ascii_alphanumeric())
            && version
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '!' | '-' | '_'));
        if !version_ok {
            return Err(format!(
                "`{text}`: {version:?} is not a release of {package}; {WRITE}"
            ));
        }
        Ok(Pin {
            package: package.to_string(),
            version: version.to_string(),
        })
    }

    /// The package's name as the registry compares names: lower case, each run of `-`, `_`
    /// and `.` one `-` (`typing_extensions` is `typing-extensions`).
    pub fn key(&self) -> String {
        normalized(&self.package)
    }
}

fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_')
}

/// A package name as the registry compares names (PEP 503).
pub fn normalized(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !out.ends_with('-') {
                out.push('-');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    out
}

impl TryFrom<String> for Pin {
    type Error = String;
    fn try_from(text: String) -> Result<Pin, String> {
        Pin::parse(&text)
    }
}

impl std::str::FromStr for Pin {
    type Err = String;
    fn from_str(text: &str) -> Result<Pin, String> {
        Pin::parse(text)
    }
}

impl fmt::Display for Pin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}=={}", self.package, self.version)
    }
}

/// The first package pinned twice in `pins`, with both pins.
pub fn twice(pins: &[Pin]) -> Option<(&Pin, &Pin)> {
    pins.iter().enumerate().find_map(|(i, a)| {
        pins[i + 1..]
            .iter()
            .find(|b| b.key() == a.key())
            .map(|b| (a, b))
    })
}

/// `defaults` (an adapter's `name==version` pins) with each of `pins` in place of the default
/// of its package, and after them the pins of packages the defaults do not name.
pub fn overlay(defaults: &[String], pins: &[Pin]) -> Vec<String> {
    let key_of = |line: &str| {
        let name: String = line.trim().chars().take_while(|c| name_char(*c)).collect();
        normalized(&name)
    };
    let mut out: Vec<String> = defaults
        .iter()
        .map(|line| match pins.iter().find(|p| p.key() == key_of(line)) {
            Some(p) => p.to_string(),
            None => line.clone(),
        })
        .collect();
    for p in pins {
        if !defaults.iter().any(|line| key_of(line) == p.key()) {
            out.push(p.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_is_an_exact_name_and_version() {
        let p = Pin::parse(" redis==5.0.8 ").unwrap();
        assert_eq!((p.package.as_str(), p.version.as_str()), ("redis", "5.0.8"));
        assert_eq!(p.to_string(), "redis==5.0.8");
        assert_eq!(
            Pin::parse("typing_extensions==4.16.0").unwrap().key(),
            "typing-extensions"
        );
    }

    #[test]
    fn a_malformed_pin_says_what_to_write() {
        let cases = [
            ("redis=5", "is not a pin: write redis==5"),
            ("redis", "names no version: write redis==<version>"),
            ("redis>=5", "not an exact pin: write redis==<version>"),
            ("-r other.txt", "is an option, not a pin"),
            ("--index-url=https://x", "is an option, not a pin"),
            ("redis[hiredis]==5.0.8", "no extras"),
            ("redis==", "is not a release of redis"),
            ("redis==5 0", "is not a release of redis"),
            ("==5.0.8", "is not a package name"),
        ];
        for (text, needle) in cases {
            let e = Pin::parse(text).unwrap_err();
            assert!(e.contains(needle), "{text}: {e}");
        }
    }

    #[test]
    fn a_runs_pin_replaces_the_default_of_its_package_and_adds_the_others() {
        let defaults = ["redis==8.1.0".to_string(), "mmh3==5.3.1".to_string()];
        let pins = [
            Pin::parse("Redis==5.0.8").unwrap(),
            Pin::parse("hiredis==3.0.0").unwrap(),
        ];
        assert_eq!(
            overlay(&defaults, &pins),
            ["Redis==5.0.8", "mmh3==5.3.1", "hiredis==3.0.0"]
        );
        assert_eq!(overlay(&defaults, &[]), defaults);
        let twice_pinned = [
            Pin::parse("redis==5.0.8").unwrap(),
            Pin::parse("REDIS==8.1.0").unwrap(),
        ];
        assert!(twice(&twice_pinned).is_some());
        assert!(twice(&pins).is_none());
    }
}
