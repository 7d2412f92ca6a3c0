//! Which request each reply on a connection answers, for the protocols whose framing is cheap to
//! read: RESP (Redis: replies come in the order of their requests) and ZooKeeper's
//! length-prefixed frames (a reply names its request's xid). The link proxy cuts the reply to a
//! named command with it (`cut_reply_to`) rather than whatever reply comes next. Any other
//! protocol (etcd's gRPC over HTTP/2) is not read: a cut there is of the next reply.

use std::collections::{BTreeMap, VecDeque};

/// A connection's protocol, told by its first request bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Protocol {
    Resp,
    ZooKeeper,
    Other,
}

/// ZooKeeper's operation codes by name (its `ZooDefs.OpCode`), the names a cut accepts.
pub const ZK_OPS: [(&str, i32); 30] = [
    ("create", 1),
    ("delete", 2),
    ("exists", 3),
    ("getData", 4),
    ("setData", 5),
    ("getACL", 6),
    ("setACL", 7),
    ("getChildren", 8),
    ("sync", 9),
    ("ping", 11),
    ("getChildren2", 12),
    ("check", 13),
    ("multi", 14),
    ("create2", 15),
    ("reconfig", 16),
    ("checkWatches", 17),
    ("removeWatches", 18),
    ("createContainer", 19),
    ("deleteContainer", 20),
    ("createTTL", 21),
    ("multiRead", 22),
    ("auth", 100),
    ("setWatches", 101),
    ("sasl", 102),
    ("getEphemerals", 103),
    ("getAllChildrenNumber", 104),
    ("setWatches2", 105),
    ("addWatch", 106),
    ("whoAmI", 107),
    ("closeSession", -11),
];

fn zk_op_name(code: i32) -> String {
    ZK_OPS
        .iter()
        .find(|(_, c)| *c == code)
        .map_or_else(|| format!("op{code}"), |(n, _)| n.to_string())
}

/// One connection's requests and replies as far as they have been read.
#[derive(Debug)]
pub struct Frames {
    protocol: Option<Protocol>,
    /// Request bytes not yet a whole request.
    requests: Vec<u8>,
    /// Reply bytes not yet a whole reply.
    replies: Vec<u8>,
    /// RESP: the commands of the requests not answered yet, in order.
    waiting: VecDeque<String>,
    /// ZooKeeper: the operation of each request not answered yet, by xid.
    by_xid: BTreeMap<i32, String>,
    /// ZooKeeper: the connect request and its response (no xid) have passed.
    zk_request_connected: bool,
    zk_reply_connected: bool,
}

impl Default for Frames {
    fn default() -> Self {
        Self::new()
    }
}

impl Frames {
    pub fn new() -> Self {
        Self {
            protocol: None,
            requests: Vec::new(),
            replies: Vec::new(),
            waiting: VecDeque::new(),
            by_xid: BTreeMap::new(),
            zk_request_connected: false,
            zk_reply_connected: false,
        }
    }

    /// Whether this connection's protocol is one whose replies can be told apart.
    pub fn readable(&self) -> bool {
        matches!(self.protocol, Some(Protocol::Resp | Protocol::ZooKeeper))
    }

    /// Reads request bytes on their way to the server; each whole request is remembered.
    pub fn request(&mut self, bytes: &[u8]) {
        if self.protocol.is_none() {
            self.protocol = bytes.first().map(|b| match b {
                _ if bytes.starts_with(b"PRI * HTTP/2") => Protocol::Other,
                b'*' => Protocol::Resp,
                0 => Protocol::ZooKeeper,
                _ => Protocol::Other,
            });
        }
        match self.protocol {
            Some(Protocol::Resp) => {
                self.requests.extend_from_slice(bytes);
                let mut at = 0;
                while let Some(len) = resp_len(&self.requests[at..]) {
                    let command = resp_command(&self.requests[at..at + len]);
                    self.waiting.push_back(command);
                    at += len;
                }
                self.requests.drain(..at);
            }
            Some(Protocol::ZooKeeper) => {
                self.requests.extend_from_slice(bytes);
                let mut at = 0;
                while let Some(len) = zk_len(&self.requests[at..]) {
                    let body = &self.requests[at + 4..at + len];
                    if !self.zk_request_connected {
                        self.zk_request_connected = true;
                    } else if body.len() >= 8 {
                        self.by_xid
                            .insert(be_i32(&body[0..4]), zk_op_name(be_i32(&body[4..8])));
                    }
                    at += len;
                }
                self.requests.drain(..at);
            }
            _ => {}
        }
    }

    /// Reads reply bytes on their way to the client: where in `bytes` the reply to a request
    /// whose command is `name` (any case) begins, if one begins (or was begun and not finished)
    /// in them. Replies before it are read as they pass; with no name, every reply is.
    pub fn reply_to(&mut self, bytes: &[u8], name: Option<&str>) -> Option<usize> {
        let is = |c: &str| name.is_some_and(|n| c.eq_ignore_ascii_case(n));
        let carried = self.replies.len();
        self.replies.extend_from_slice(bytes);
        let mut at = 0;
        let found = loop {
            let rest = &self.replies[at..];
            if rest.is_empty() {
                break None;
            }
            let (answers, len) = match self.protocol {
                Some(Protocol::Resp) => {
                    // A push (RESP3 `>`) answers no request.
                    let answers = if rest[0] == b'>' {
                        None
                    } else {
                        self.waiting.front().cloned()
                    };
                    (answers, resp_len(rest))
                }
                Some(Protocol::ZooKeeper) if !self.zk_reply_connected => (None, zk_len(rest)),
                Some(Protocol::ZooKeeper) => {
                    let xid = (rest.len() >= 8).then(|| be_i32(&rest[4..8]));
                    match xid {
                        Some(x) => (self.by_xid.get(&x).cloned(), zk_len(rest)),
                        // Not even the xid yet: wait for more.
                        None => (None, None),
                    }
                }
                _ => break None,
            };
            if answers.as_deref().is_some_and(is) {
                break Some(at.saturating_sub(carried));
            }
            let Some(len) = len else {
                break None;
            };
            match self.protocol {
                Some(Protocol::Resp) if rest[0] != b'>' => {
                    self.waiting.pop_front();
                }
                Some(Protocol::ZooKeeper) if !self.zk_reply_connected => {
                    self.zk_reply_connected = true;
                }
                Some(Protocol::ZooKeeper) => {
                    self.by_xid.remove(&be_i32(&rest[4..8]));
                }
                _ => {}
            }
            at += len;
        };
        if found.is_none() {
            self.replies.drain(..at);
        }
        found
    }
}

fn be_i32(b: &[u8]) -> i32 {
    i32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

/// A ZooKeeper frame's whole length (its 4-byte length and what follows), if all of it is here.
fn zk_len(buf: &[u8]) -> Option<usize> {
    let n = usize::try_from(be_i32(buf.get(0..4)?)).ok()?;
    (buf.len() >= 4 + n).then_some(4 + n)
}

/// The line at the start of `buf` without its `\r\n`, and the length with it.
fn line(buf: &[u8]) -> Option<(&[u8], usize)> {
    let end = buf.windows(2).position(|w| w == b"\r\n")?;
    Some((&buf[..end], end + 2))
}

/// The length of the one RESP value (RESP2 or RESP3) at the start of `buf`, if all of it is
/// here. A request that is not an array is an inline command: one line.
fn resp_len(buf: &[u8]) -> Option<usize> {
    let (head, head_len) = line(buf)?;
    let count = || std::str::from_utf8(&head[1..]).ok()?.parse::<i64>().ok();
    match *head.first()? {
        b'+' | b'-' | b':' | b'_' | b',' | b'(' | b'#' => Some(head_len),
        b'$' | b'=' | b'!' => match count()? {
            n if n < 0 => Some(head_len),
            n => {
                let total = head_len + usize::try_from(n).ok()? + 2;
                (buf.len() >= total).then_some(total)
            }
        },
        kind @ (b'*' | b'~' | b'>' | b'%' | b'|') => {
            let n = count()?;
            let items = match kind {
                b'%' | b'|' => n.max(0) * 2,
                _ => n.max(0),
            };
            let mut at = head_len;
            for _ in 0..items {
                at += resp_len(&buf[at..])?;
            }
            Some(at)
        }
        _ => Some(head_len),
    }
}

/// A whole RESP request's command, upper-cased: the first element of its array, or the first
/// word of an inline command.
fn resp_command(request: &[u8]) -> String {
    let word = if request.first() == Some(&b'*') {
        line(request)
            .and_then(|(_, at)| {
                let (_, bulk_head) = line(&request[at..])?;
                let (word, _) = line(&request[at + bulk_head..])?;
                Some(word)
            })
            .unwrap_or_default()
    } else {
        request
            .split(|b| b.is_ascii_whitespace())
            .next()
            .unwrap_or_default()
    };
    String::from_utf8_lossy(word).to_ascii_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resp(args: &[&str]) -> Vec<u8> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend(format!("${}\r\n{a}\r\n", a.len()).into_bytes());
        }
        out
    }

    #[test]
    fn resp_replies_are_matched_to_their_requests_in_order_across_chunks() {
        let mut f = Frames::new();
        let mut requests = resp(&["SET", "k", "v", "NX", "PX", "2000"]);
        requests.extend(resp(&["evalsha", "abc", "1", "k", "v"]));
        requests.extend(resp(&["PING"]));
        // Requests split anywhere are read whole.
        f.request(&requests[..7]);
        f.request(&requests[7..]);
        assert!(f.readable());
        // The SET's reply, then an array and a RESP3 push that answers nothing, then EVALSHA's.
        let replies = b"+OK\r\n>2\r\n$7\r\nmessage\r\n:1\r\n:1\r\n+PONG\r\n";
        let at = f.reply_to(&replies[..3], Some("EVALSHA"));
        assert_eq!(at, None, "the SET reply is not whole yet");
        let at = f.reply_to(&replies[3..], Some("EVALSHA"));
        // Offsets count from the chunk given: EVALSHA's reply is at 26 of the whole, 23 of it.
        assert_eq!(at, Some(23));
    }

    #[test]
    fn a_reply_begun_in_an_earlier_chunk_is_cut_at_the_start_of_the_next() {
        let mut f = Frames::new();
        f.request(&resp(&["GET", "k"]));
        f.request(&resp(&["DEL", "k"]));
        let bulk = b"$10\r\n0123456789\r\n:1\r\n";
        assert_eq!(f.reply_to(&bulk[..8], Some("GET")), Some(0));
        let mut g = Frames::new();
        g.request(&resp(&["GET", "k"]));
        g.request(&resp(&["DEL", "k"]));
        assert_eq!(g.reply_to(&bulk[..8], Some("DEL")), None);
        assert_eq!(g.reply_to(&bulk[8..], Some("DEL")), Some(9));
    }

    fn zk_frame(body: &[u8]) -> Vec<u8> {
        let mut out = (body.len() as i32).to_be_bytes().to_vec();
        out.extend_from_slice(body);
        out
    }

    fn zk_request(xid: i32, op: i32) -> Vec<u8> {
        let mut body = xid.to_be_bytes().to_vec();
        body.extend(op.to_be_bytes());
        body.extend(b"/fencecheck/locks/x");
        zk_frame(&body)
    }

    fn zk_reply(xid: i32) -> Vec<u8> {
        let mut body = xid.to_be_bytes().to_vec();
        body.extend(7i64.to_be_bytes());
        body.extend(0i32.to_be_bytes());
        zk_frame(&body)
    }

    #[test]
    fn zookeeper_replies_are_matched_by_xid_after_the_connect_exchange() {
        let mut f = Frames::new();
        f.request(&zk_frame(&[0; 44]));
        f.request(&zk_request(1, 1));
        f.request(&zk_request(-2, 11));
        f.request(&zk_request(2, 2));
        assert!(f.readable());
        let mut replies = zk_frame(&[0; 36]);
        replies.extend(zk_reply(1));
        replies.extend(zk_reply(-2));
        // A watch event (xid -1) answers no request.
        replies.extend(zk_reply(-1));
        let before_delete = replies.len();
        replies.extend(zk_reply(2));
        assert_eq!(f.reply_to(&replies, Some("DELETE")), Some(before_delete));
        let mut g = Frames::new();
        g.request(&zk_frame(&[0; 44]));
        g.request(&zk_request(-2, 11));
        let mut connect = zk_frame(&[0; 36]);
        connect.extend(zk_reply(-2));
        assert_eq!(g.reply_to(&connect, Some("ping")), Some(40));
    }

    #[test]
    fn etcd_grpc_is_not_read() {
        let mut f = Frames::new();
        f.request(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        assert!(!f.readable());
        assert_eq!(f.reply_to(b"\0\0\x12\x04", Some("Put")), None);
    }
}
