//! Server-Sent Events as the Streamable HTTP transport sends them (the WHATWG event-stream
//! format): fed in chunks, answering the events whose data is complete.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// The `event:` field, if any (absent means "message").
    pub event: Option<String>,
    /// The last `id:` seen on this stream.
    pub id: Option<String>,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// An incremental parser: chunks in, events out. A chunk may end in the middle of a line or
/// even between `\r` and `\n`; both are carried over to the next chunk.
#[derive(Debug, Default)]
pub struct Parser {
    /// The unfinished last line.
    line: String,
    /// The previous chunk ended on `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    event: Option<String>,
    data: Option<String>,
    last_id: Option<String>,
}

impl Parser {
    pub fn new() -> Parser {
        Parser::default()
    }

    /// Feed the next chunk; answers the events it completed.
    pub fn feed(&mut self, chunk: &str) -> Vec<Event> {
        let mut out = Vec::new();
        for c in chunk.chars() {
            let after_cr = std::mem::replace(&mut self.after_cr, false);
            match c {
                '\n' if after_cr => {}
                '\r' | '\n' => {
                    self.after_cr = c == '\r';
                    let line = std::mem::take(&mut self.line);
                    self.line_done(&line, &mut out);
                }
                c => self.line.push(c),
            }
        }
        out
    }

    /// The stream ended: an event whose blank line never came is still dispatched (a
    /// server that closes right after its last `data:` line loses nothing).
    pub fn finish(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        let line = std::mem::take(&mut self.line);
        if !line.is_empty() {
            self.line_done(&line, &mut out);
        }
        self.dispatch(&mut out);
        out
    }

    fn line_done(&mut self, line: &str, out: &mut Vec<Event>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            return; // a comment (keep-alive)
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => match &mut self.data {
                Some(d) => {
                    d.push('\n');
                    d.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            // An id with NUL is ignored, as the standard says.
            "id" if !value.contains('\0') => self.last_id = Some(value.to_string()),
            _ => {} // retry and unknown fields: nothing to do for a one-shot answer
        }
    }

    fn dispatch(&mut self, out: &mut Vec<Event>) {
        let event = self.event.take();
        // No data line: nothing is dispatched (a priming event with only id/retry).
        if let Some(data) = self.data.take() {
            out.push(Event {
                event,
                id: self.last_id.clone(),
                data,
            });
        }
    }
}

/// Parse a whole event-stream body.
pub fn parse(body: &str) -> Vec<Event> {
    let mut p = Parser::new();
    let mut out = p.feed(body);
    out.extend(p.finish());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_rpc_answer_in_one_event() {
        let body = "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        let events = parse(body);
        assert_eq!(events.len(), 1);
        assert_eq!(
            events[0].data,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}"
        );
        assert_eq!(events[0].event, None);
    }

    #[test]
    fn priming_events_comments_and_retry_dispatch_nothing() {
        // rmcp primes a stream with an id, a retry and empty data.
        let body =
            ": keep-alive\n\nid: 0\nretry: 3000\n\nid: 1\nevent: message\ndata: {\"a\":1}\n\n";
        let events = parse(body);
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "{\"a\":1}");
        assert_eq!(events[0].event.as_deref(), Some("message"));
        assert_eq!(events[0].id.as_deref(), Some("1"));
    }

    #[test]
    fn an_empty_data_line_is_an_event_with_empty_data() {
        let events = parse("id: 0\ndata:\n\n");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "");
    }

    #[test]
    fn data_lines_join_with_newlines_and_one_leading_space_goes() {
        let events = parse("data: line one\ndata:  two\ndata:three\n\n");
        assert_eq!(events[0].data, "line one\n two\nthree");
    }

    #[test]
    fn crlf_and_cr_line_ends() {
        let events = parse("data: a\r\n\r\ndata: b\r\rdata: c\n\n");
        let data: Vec<&str> = events.iter().map(|e| e.data.as_str()).collect();
        assert_eq!(data, ["a", "b", "c"]);
    }

    #[test]
    fn chunks_split_anywhere_give_the_same_events() {
        let body = "id: 7\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"x\":\"é\"}}\r\n\r\ndata: second\n\n";
        let whole = parse(body);
        let chars: Vec<char> = body.chars().collect();
        for cut in 0..chars.len() {
            let (a, b): (String, String) =
                (chars[..cut].iter().collect(), chars[cut..].iter().collect());
            let mut p = Parser::new();
            let mut got = p.feed(&a);
            got.extend(p.feed(&b));
            got.extend(p.finish());
            assert_eq!(got, whole, "split at {cut}");
        }
        assert_eq!(whole.len(), 2);
    }

    #[test]
    fn a_stream_closed_without_its_blank_line_still_gives_its_event() {
        let events = parse("data: last");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "last");
    }

    #[test]
    fn a_field_without_colon_and_unknown_fields_are_harmless() {
        let events = parse("data\nfoo: bar\n\n");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].data, "");
    }
}
