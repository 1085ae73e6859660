//! SIGINT and SIGTERM under plain `cargo test` and nextest (whose test processes are
//! libtest's): libtest catches neither, and the processes of an agent run in process groups of
//! their own, out of reach of the terminal's Ctrl-C. From the first eval of the process, a
//! thread of its own waits for either signal, ends every live process tree
//! ([`crate::base::process::end_all_and_die`]) and dies of the signal, as the test process would
//! have without it (same exit status).

/// Starts listening, once per process. Listening starts before this returns, so a signal
/// that arrives while the eval's first process starts is not lost. A signal that cannot be
/// listened to keeps its default action (the watchdog still ends the trees on Linux).
#[cfg(unix)]
pub(crate) fn own() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        else {
            return;
        };
        let listening = {
            let _entered = runtime.enter();
            signal(SignalKind::interrupt()).and_then(|interrupt| {
                signal(SignalKind::terminate()).map(|terminate| (interrupt, terminate))
            })
        };
        let Ok((mut interrupt, mut terminate)) = listening else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("niceeval-signals".into())
            .spawn(move || {
                let signal = runtime.block_on(async {
                    tokio::select! {
                        _ = interrupt.recv() => libc::SIGINT,
                        _ = terminate.recv() => libc::SIGTERM,
                    }
                });
                crate::base::process::end_all_and_die(signal)
            });
    });
}

/// Elsewhere the default action stays.
#[cfg(not(unix))]
pub(crate) fn own() {}
