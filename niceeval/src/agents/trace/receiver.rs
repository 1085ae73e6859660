//! The OTLP/HTTP receiver: one per process, on `127.0.0.1` and an ephemeral port, started on
//! first use on a thread of its own (it outlives every eval's runtime). `POST /v1/traces` and
//! `/v1/logs` are read and their spans handed to the registry; `/v1/metrics` is accepted and
//! ignored; a malformed body is a 400 with a message, a body over [`MAX_BODY`] a 413.

use std::convert::Infallible;
use std::sync::OnceLock;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};

use super::otlp::{DecodeError, Signal, decode, decompress};
use super::registry::registry;

/// The largest body accepted, compressed or not.
pub(crate) const MAX_BODY: usize = 32 * 1024 * 1024;

/// The receiver's base URL (`http://127.0.0.1:PORT`), starting it on first call.
pub(crate) fn endpoint() -> Result<&'static str, super::TraceError> {
    static ENDPOINT: OnceLock<Result<String, super::TraceError>> = OnceLock::new();
    ENDPOINT.get_or_init(start).as_deref().map_err(Clone::clone)
}

fn start() -> Result<String, super::TraceError> {
    use super::TraceError;
    let listen = |e: std::io::Error| TraceError::Listen(e.into());
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0)).map_err(listen)?;
    listener.set_nonblocking(true).map_err(listen)?;
    let address = listener.local_addr().map_err(listen)?;
    std::thread::Builder::new()
        .name("niceeval-otlp".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(_) => return,
            };
            runtime.block_on(serve(listener));
        })
        .map_err(|e| TraceError::Receiver(e.into()))?;
    Ok(format!("http://{address}"))
}

async fn serve(listener: std::net::TcpListener) {
    let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
        return;
    };
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        tokio::spawn(async move {
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(io, hyper::service::service_fn(handle))
                .await;
        });
    }
}

fn reply(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

async fn handle(request: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let signal = match (request.method(), request.uri().path()) {
        (&hyper::Method::POST, "/v1/traces") => Some(Signal::Traces),
        (&hyper::Method::POST, "/v1/logs") => Some(Signal::Logs),
        (&hyper::Method::POST, "/v1/metrics") => None,
        _ => {
            return Ok(reply(
                StatusCode::NOT_FOUND,
                "text/plain",
                "niceeval receives OTLP/HTTP: POST /v1/traces or /v1/logs\n",
            ));
        }
    };
    let header = |name: hyper::header::HeaderName| {
        request
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string)
    };
    let content_type = header(hyper::header::CONTENT_TYPE);
    let encoding = header(hyper::header::CONTENT_ENCODING);
    let json = content_type.as_deref().is_some_and(|c| c.contains("json"));
    let ok_type = if json {
        "application/json"
    } else {
        "application/x-protobuf"
    };
    let ok_body: &'static [u8] = if json { b"{}" } else { b"" };
    let declared = header(hyper::header::CONTENT_LENGTH).and_then(|l| l.parse::<usize>().ok());
    if declared.is_some_and(|l| l > MAX_BODY) {
        return Ok(refuse(DecodeError::TooLarge(MAX_BODY)));
    }
    let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(body) => body.to_bytes().to_vec(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            return Ok(refuse(DecodeError::TooLarge(MAX_BODY)));
        }
        Err(e) => {
            return Ok(reply(
                StatusCode::BAD_REQUEST,
                "text/plain",
                format!("cannot read the body: {e}\n"),
            ));
        }
    };
    let Some(signal) = signal else {
        return Ok(reply(StatusCode::OK, ok_type, ok_body));
    };
    let batch = decompress(body, encoding.as_deref(), MAX_BODY)
        .and_then(|body| decode(signal, content_type.as_deref(), &body));
    match batch {
        Ok(batch) => {
            registry().ingest(batch);
            Ok(reply(StatusCode::OK, ok_type, ok_body))
        }
        Err(e) => Ok(refuse(e)),
    }
}

fn refuse(error: DecodeError) -> Response<Full<Bytes>> {
    let status = match error {
        DecodeError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
        _ => StatusCode::BAD_REQUEST,
    };
    let message = error.to_string();
    registry().reject(message.clone());
    reply(status, "text/plain", format!("{message}\n"))
}
