//! Crash-safe JSONL files. A run's history and resource log are appended one line at a time and
//! handed to the kernel after every line, so a harness that dies (or is SIGKILLed) loses nothing it
//! had recorded; readers stream the file and name the file and line of anything malformed.

use serde::de::DeserializeOwned;
use serde::Serialize;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use crate::event::Event;
use crate::store::StoreError;

/// The recorders' and readers' name for [`StoreError`], the one error of a run's files.
pub type JsonlError = StoreError;

/// Appends serialized values as lines; every line reaches the kernel before `append` returns.
#[derive(Debug)]
pub struct JsonlWriter {
    path: PathBuf,
    file: Mutex<File>,
}

impl JsonlWriter {
    /// Creates (or truncates) the file.
    pub fn create(path: &Path) -> Result<Self, StoreError> {
        let file = File::create(path).map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    /// Opens the file for appending, creating it if needed.
    pub fn append_to(path: &Path) -> Result<Self, StoreError> {
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|source| StoreError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        Ok(Self {
            path: path.to_path_buf(),
            file: Mutex::new(file),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one value as one line with a single `write` call (no user-space buffer to lose).
    pub fn append<T: Serialize>(&self, value: &T) -> Result<(), StoreError> {
        let mut line = serde_json::to_vec(value).map_err(|e| StoreError::Invalid {
            path: self.path.clone(),
            message: format!("cannot serialize a line: {e}"),
        })?;
        line.push(b'\n');
        let mut file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.write_all(&line).map_err(|source| StoreError::Io {
            path: self.path.clone(),
            source,
        })
    }

    /// Forces the file's contents to disk (for the end of a phase; `append` already survives a
    /// process crash, this also survives a machine crash).
    pub fn sync(&self) -> Result<(), StoreError> {
        let file = self.file.lock().unwrap_or_else(|p| p.into_inner());
        file.sync_data().map_err(|source| StoreError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

/// Something that wants to see every event as it is recorded (the run's view of who holds the
/// lock now, progress counters), called under the recorder's lock in index order.
pub type Observer = Box<dyn Fn(&Event) + Send + Sync>;

/// The history recorder: assigns `index` in file order and appends. Shared by every task that
/// records events, so index order is file order by construction.
pub struct HistoryWriter {
    inner: Mutex<(u64, JsonlWriter)>,
    observer: Option<Observer>,
}

impl std::fmt::Debug for HistoryWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HistoryWriter")
            .field("inner", &self.inner)
            .field("observed", &self.observer.is_some())
            .finish()
    }
}

impl HistoryWriter {
    pub fn create(path: &Path) -> Result<Self, StoreError> {
        Ok(Self {
            inner: Mutex::new((0, JsonlWriter::create(path)?)),
            observer: None,
        })
    }

    /// Like [`HistoryWriter::create`], calling `observer` with each event after it is written.
    pub fn create_observed(path: &Path, observer: Observer) -> Result<Self, StoreError> {
        Ok(Self {
            inner: Mutex::new((0, JsonlWriter::create(path)?)),
            observer: Some(observer),
        })
    }

    /// Records the event with the next index and returns that index.
    pub fn record(&self, mut event: Event) -> Result<u64, StoreError> {
        let mut guard = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let (next, writer) = &mut *guard;
        event.index = *next;
        writer.append(&event)?;
        *next += 1;
        if let Some(observe) = &self.observer {
            observe(&event);
        }
        Ok(event.index)
    }

    /// How many events have been recorded.
    pub fn len(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).0
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn sync(&self) -> Result<(), StoreError> {
        self.inner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .1
            .sync()
    }
}

/// Streams a JSONL file, yielding each parsed value with its 1-based line number. Blank lines
/// are skipped; a last line without a newline that does not parse (a crash mid-write) is
/// [`StoreError::TornTail`], any other bad line [`StoreError::Parse`]: the caller decides whether
/// a torn tail only makes the history incomplete.
pub struct JsonlReader<T> {
    path: PathBuf,
    reader: BufReader<File>,
    bytes: Vec<u8>,
    line: u64,
    _t: std::marker::PhantomData<T>,
}

impl<T> std::fmt::Debug for JsonlReader<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlReader")
            .field("path", &self.path)
            .field("line", &self.line)
            .finish()
    }
}

impl<T: DeserializeOwned> JsonlReader<T> {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let file = File::open(path).map_err(|source| StoreError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            reader: BufReader::with_capacity(1 << 20, file),
            bytes: Vec::new(),
            line: 0,
            _t: std::marker::PhantomData,
        })
    }
}

impl<T: DeserializeOwned> Iterator for JsonlReader<T> {
    type Item = Result<(u64, T), StoreError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            self.bytes.clear();
            match self.reader.read_until(b'\n', &mut self.bytes) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(source) => {
                    return Some(Err(StoreError::Io {
                        path: self.path.clone(),
                        source,
                    }))
                }
            }
            self.line += 1;
            // Torn: the last line, without its newline, stopping early (mid-character or
            // mid-value). Anything else that does not read is a malformed line.
            let last = self.bytes.last() != Some(&b'\n');
            let fail = |torn: bool, message: String| {
                let (path, line) = (self.path.clone(), self.line);
                Some(Err(if torn {
                    StoreError::TornTail {
                        path,
                        line,
                        message,
                    }
                } else {
                    StoreError::Parse {
                        path,
                        line,
                        message,
                    }
                }))
            };
            let text = match std::str::from_utf8(&self.bytes) {
                Ok(t) => t.trim_end_matches(['\n', '\r']),
                Err(e) => {
                    return fail(
                        last && e.error_len().is_none(),
                        format!("not UTF-8 text: {e}"),
                    )
                }
            };
            if text.trim().is_empty() {
                continue;
            }
            return match serde_json::from_str(text) {
                Ok(v) => Some(Ok((self.line, v))),
                Err(e) => fail(last && crate::store::cut_short(text), e.to_string()),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{OpType, Process, F};

    fn tmp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("fc-jsonl-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join("history.jsonl")
    }

    #[test]
    fn history_is_indexed_in_file_order_and_readable_back() {
        let path = tmp("roundtrip");
        let w = HistoryWriter::create(&path).unwrap();
        for i in 0..3 {
            let mut e = Event::new(i * 10, Process::Worker(1), OpType::Invoke, F::Acquire);
            e.lock = Some("l".into());
            assert_eq!(w.record(e).unwrap(), i);
        }
        let read: Vec<_> = JsonlReader::<Event>::open(&path)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(read.len(), 3);
        assert_eq!(read[2].0, 3, "line numbers are 1-based");
        assert_eq!(read[2].1.index, 2);
    }

    #[test]
    fn an_observer_sees_every_event_in_index_order() {
        let path = tmp("observed");
        let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
        let sink = seen.clone();
        let w = HistoryWriter::create_observed(
            &path,
            Box::new(move |e: &Event| sink.lock().unwrap().push(e.index)),
        )
        .unwrap();
        for i in 0..3 {
            w.record(Event::new(
                i,
                Process::Worker(1),
                OpType::Invoke,
                F::Acquire,
            ))
            .unwrap();
        }
        assert_eq!(*seen.lock().unwrap(), vec![0, 1, 2]);
    }

    #[test]
    fn a_malformed_line_names_file_and_line() {
        let path = tmp("malformed");
        std::fs::write(
            &path,
            "{\"index\":0,\"time\":0,\"process\":1,\"type\":\"invoke\",\"f\":\"acquire\"}\n\nnot json\n",
        )
        .unwrap();
        let mut r = JsonlReader::<Event>::open(&path).unwrap();
        assert!(r.next().unwrap().is_ok());
        let err = r.next().unwrap().unwrap_err().to_string();
        assert!(err.contains("history.jsonl:3:"), "{err}");
        assert!(r.next().is_none());
    }

    #[test]
    fn a_torn_last_line_is_told_apart_from_a_malformed_one() {
        let path = tmp("torn");
        let good = "{\"index\":0,\"time\":0,\"process\":1,\"type\":\"invoke\",\"f\":\"acquire\"}";
        std::fs::write(&path, format!("{good}\n{good}")).unwrap();
        let read: Vec<_> = JsonlReader::<Event>::open(&path).unwrap().collect();
        assert!(
            read.iter().all(Result::is_ok),
            "a whole last line without newline reads"
        );
        std::fs::write(&path, format!("{good}\n{{\"index\":1,\"ti")).unwrap();
        let mut r = JsonlReader::<Event>::open(&path).unwrap();
        assert!(r.next().unwrap().is_ok());
        let err = r.next().unwrap().unwrap_err();
        assert!(matches!(err, StoreError::TornTail { line: 2, .. }), "{err}");
        for whole_but_wrong in ["{\"index\":1}", "not json"] {
            std::fs::write(&path, format!("{good}\n{whole_but_wrong}")).unwrap();
            let err = JsonlReader::<Event>::open(&path)
                .unwrap()
                .nth(1)
                .unwrap()
                .unwrap_err();
            assert!(matches!(err, StoreError::Parse { line: 2, .. }), "{err}");
        }
        std::fs::write(&path, [good.as_bytes(), b"\n{\"lock\":\"\xc3"].concat()).unwrap();
        let err = JsonlReader::<Event>::open(&path)
            .unwrap()
            .nth(1)
            .unwrap()
            .unwrap_err();
        assert!(matches!(err, StoreError::TornTail { line: 2, .. }), "{err}");
        std::fs::write(&path, format!("{good}\n{{\"index\":1,\"ti\n")).unwrap();
        let mut r = JsonlReader::<Event>::open(&path).unwrap();
        assert!(r.next().unwrap().is_ok());
        let err = r.next().unwrap().unwrap_err();
        assert!(matches!(err, StoreError::Parse { line: 2, .. }), "{err}");
    }
}
