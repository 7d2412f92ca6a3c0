//! Recipe configuration: the raw values from flags or YAML, and the one `validate` that turns
//! them into the only type a worker can be built from. Each error names the field and the rule,
//! and says what to write instead.

pub use crate::kinds::RecipeKind;
use results::Dur;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Where renewal runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renewal {
    /// A background task renews every `renew_interval` (keep-alive threads).
    Background,
    /// The work loop renews before each write when `renew_interval` has passed.
    Inline,
}

/// What the client does while it cannot confirm ownership.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnSuspect {
    /// Stop working at once: no write goes out unless ownership is confirmed.
    Stop,
    /// The naive client: keep writing whatever ownership looks like.
    Continue,
}

/// The client discipline: how a worker uses its lock. Written as its string form
/// (`stop,background`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "String", try_from = "String")]
pub struct Discipline {
    pub renewal: Renewal,
    pub on_suspect: OnSuspect,
}

impl Default for Discipline {
    /// `stop,background`: stop writing when ownership is suspect, renew in the background.
    fn default() -> Self {
        Discipline {
            renewal: Renewal::Background,
            on_suspect: OnSuspect::Stop,
        }
    }
}

impl fmt::Display for Discipline {
    /// The form `FromStr` reads back, e.g. `stop,background`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let suspect = match self.on_suspect {
            OnSuspect::Stop => "stop",
            OnSuspect::Continue => "continue",
        };
        let renewal = match self.renewal {
            Renewal::Background => "background",
            Renewal::Inline => "inline",
        };
        write!(f, "{suspect},{renewal}")
    }
}

impl From<Discipline> for String {
    fn from(d: Discipline) -> String {
        d.to_string()
    }
}

impl TryFrom<String> for Discipline {
    type Error = ConfigError;
    fn try_from(s: String) -> Result<Self, ConfigError> {
        s.parse()
    }
}

impl FromStr for Discipline {
    type Err = ConfigError;
    /// `stop`, `continue`, `stop,inline`, `continue,background`, ...
    fn from_str(s: &str) -> Result<Self, ConfigError> {
        let mut d = Discipline::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "stop" => d.on_suspect = OnSuspect::Stop,
                "continue" => d.on_suspect = OnSuspect::Continue,
                "background" => d.renewal = Renewal::Background,
                "inline" => d.renewal = Renewal::Inline,
                other => {
                    return Err(ConfigError::Invalid {
                        field: "discipline",
                        rule: "a comma-separated list of stop|continue and background|inline"
                            .into(),
                        got: other.into(),
                    })
                }
            }
        }
        Ok(d)
    }
}

/// Raw recipe settings; `None` takes the default named in [`RawRecipeConfig::validate`].
#[derive(Debug, Clone, Default)]
pub struct RawRecipeConfig {
    pub ttl: Option<Duration>,
    pub renew_interval: Option<Duration>,
    pub session_timeout: Option<Duration>,
    pub op_timeout: Option<Duration>,
    pub acquire_timeout: Option<Duration>,
}

/// A validated recipe configuration. It travels to a worker process inside its launch
/// ([`crate::worker::WorkerLaunch`]) in its raw form, and is read back through the same
/// [`RawRecipeConfig::validate`]: a hand-edited launch cannot smuggle in what validation refuses.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(into = "WireConfig", try_from = "WireConfig")]
pub struct RecipeConfig {
    pub recipe: RecipeKind,
    /// Lease / key expiry.
    pub ttl: Duration,
    /// Time between renewals (< ttl / 2).
    pub renew_interval: Duration,
    /// ZooKeeper session timeout (defaults to ttl).
    pub session_timeout: Duration,
    /// Deadline of a single provider request (< ttl).
    pub op_timeout: Duration,
    /// How long one acquire may wait for the lock before it fails.
    pub acquire_timeout: Duration,
}

/// [`RecipeConfig`] as it is written: the recipe's name and each duration in the one grammar of
/// durations (`results::Dur`: `2s`, `666666666ns`), so a launch is readable in `docker inspect`
/// and exact.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct WireConfig {
    recipe: String,
    ttl: Dur,
    renew_interval: Dur,
    session_timeout: Dur,
    op_timeout: Dur,
    acquire_timeout: Dur,
}

impl From<RecipeConfig> for WireConfig {
    fn from(c: RecipeConfig) -> Self {
        WireConfig {
            recipe: c.recipe.to_string(),
            ttl: Dur(c.ttl),
            renew_interval: Dur(c.renew_interval),
            session_timeout: Dur(c.session_timeout),
            op_timeout: Dur(c.op_timeout),
            acquire_timeout: Dur(c.acquire_timeout),
        }
    }
}

impl TryFrom<WireConfig> for RecipeConfig {
    type Error = String;
    fn try_from(w: WireConfig) -> Result<Self, String> {
        let recipe: RecipeKind = w.recipe.parse().map_err(|e| format!("recipe: {e}"))?;
        RawRecipeConfig {
            ttl: Some(w.ttl.get()),
            renew_interval: Some(w.renew_interval.get()),
            session_timeout: Some(w.session_timeout.get()),
            op_timeout: Some(w.op_timeout.get()),
            acquire_timeout: Some(w.acquire_timeout.get()),
        }
        .validate(recipe)
        .map_err(|e| e.to_string())
    }
}

/// A configuration value that breaks a rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("{field}: {rule} (got {got})")]
    Invalid {
        field: &'static str,
        rule: String,
        got: String,
    },
}

fn invalid(field: &'static str, rule: impl Into<String>, got: Duration) -> ConfigError {
    ConfigError::Invalid {
        field,
        rule: rule.into(),
        got: Dur(got).to_string(),
    }
}

impl RawRecipeConfig {
    /// Defaults: ttl 5s, renew_interval ttl/3, session_timeout ttl, op_timeout min(ttl/2, 2s),
    /// acquire_timeout 10s.
    pub fn validate(&self, recipe: RecipeKind) -> Result<RecipeConfig, ConfigError> {
        let ttl = self.ttl.unwrap_or(Duration::from_secs(5));
        if ttl.is_zero() {
            return Err(invalid("ttl", "must be greater than 0, e.g. 5s", ttl));
        }
        if recipe.is_etcd() && (ttl.subsec_nanos() != 0 || ttl < Duration::from_secs(2)) {
            return Err(invalid(
                "ttl",
                "etcd leases have whole seconds and a minimum of 2s: write e.g. 2s or 5s",
                ttl,
            ));
        }
        let renew_interval = self.renew_interval.unwrap_or(ttl / 3);
        if renew_interval.is_zero() || renew_interval >= ttl / 2 {
            return Err(invalid(
                "renew_interval",
                format!(
                    "must be greater than 0 and less than ttl/2 = {}",
                    Dur(ttl / 2)
                ),
                renew_interval,
            ));
        }
        let session_timeout = self.session_timeout.unwrap_or(ttl);
        if session_timeout.is_zero() {
            return Err(invalid(
                "session_timeout",
                "must be greater than 0",
                session_timeout,
            ));
        }
        let op_timeout = self
            .op_timeout
            .unwrap_or_else(|| (ttl / 2).min(Duration::from_secs(2)));
        if op_timeout.is_zero() || op_timeout >= ttl {
            return Err(invalid(
                "op_timeout",
                format!("must be greater than 0 and less than ttl = {}", Dur(ttl)),
                op_timeout,
            ));
        }
        let acquire_timeout = self.acquire_timeout.unwrap_or(Duration::from_secs(10));
        if acquire_timeout.is_zero() {
            return Err(invalid(
                "acquire_timeout",
                "must be greater than 0",
                acquire_timeout,
            ));
        }
        Ok(RecipeConfig {
            recipe,
            ttl,
            renew_interval,
            session_timeout,
            op_timeout,
            acquire_timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Option<Duration> {
        Some(Duration::from_millis(n))
    }

    #[test]
    fn a_config_travels_as_its_raw_form_and_comes_back_validated() {
        let c = RawRecipeConfig {
            ttl: ms(2000),
            renew_interval: Some(Duration::from_nanos(666_666_667)),
            acquire_timeout: ms(1500),
            ..Default::default()
        }
        .validate(RecipeKind::EtcdLease)
        .unwrap();
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["recipe"], "etcd-lease");
        assert_eq!(json["acquire_timeout"], "1500ms");
        assert_eq!(json["renew_interval"], "666666667ns");
        assert_eq!(
            serde_json::from_value::<RecipeConfig>(json.clone()).unwrap(),
            c
        );
        let mut bad = json;
        bad["ttl"] = "2500ms".into();
        let err = serde_json::from_value::<RecipeConfig>(bad)
            .unwrap_err()
            .to_string();
        assert!(err.contains("etcd leases have whole seconds"), "{err}");
    }

    #[test]
    fn defaults_are_valid_and_renew_well_before_expiry() {
        let c = RawRecipeConfig::default()
            .validate(RecipeKind::EtcdLease)
            .unwrap();
        assert_eq!(c.ttl, Duration::from_secs(5));
        assert!(c.renew_interval < c.ttl / 2);
        assert!(c.op_timeout < c.ttl);
    }

    #[test]
    fn a_renew_interval_of_half_the_ttl_is_rejected_naming_field_and_rule() {
        let raw = RawRecipeConfig {
            ttl: ms(2000),
            renew_interval: ms(1000),
            ..Default::default()
        };
        let err = raw.validate(RecipeKind::RedisLock).unwrap_err().to_string();
        assert_eq!(
            err,
            "renew_interval: must be greater than 0 and less than ttl/2 = 1s (got 1s)"
        );
    }

    #[test]
    fn zero_ttl_and_fractional_etcd_ttl_are_rejected() {
        let zero = RawRecipeConfig {
            ttl: ms(0),
            ..Default::default()
        };
        assert!(zero
            .validate(RecipeKind::Memory)
            .unwrap_err()
            .to_string()
            .starts_with("ttl:"));
        let frac = RawRecipeConfig {
            ttl: ms(2500),
            ..Default::default()
        };
        assert!(frac.validate(RecipeKind::EtcdLock).is_err());
        assert!(frac.validate(RecipeKind::ZkLock).is_ok());
    }

    #[test]
    fn recipe_and_discipline_names_parse_or_list_the_choices() {
        assert_eq!(
            "redlock".parse::<RecipeKind>().unwrap(),
            RecipeKind::Redlock
        );
        let err = "etcd".parse::<RecipeKind>().unwrap_err().to_string();
        assert!(err.contains("etcd-lease, etcd-lock"), "{err}");
        let d: Discipline = "continue,inline".parse().unwrap();
        assert_eq!(d.on_suspect, OnSuspect::Continue);
        assert_eq!(d.renewal, Renewal::Inline);
        assert!("pause".parse::<Discipline>().is_err());
        assert_eq!(d.to_string().parse::<Discipline>().unwrap(), d);
    }
}
