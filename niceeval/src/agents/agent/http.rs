//! An HTTP service as the agent under test: each turn is one request the target builds from
//! the turn's input ([`HttpTarget::request`]), sent through the provider layer's pooled,
//! limited and retried exchange ([`crate::agents::provider::http`]), and one reply the target reads
//! from the answer ([`HttpTarget::reply`]). A suite file's `http` provider is such a target.

use std::sync::{Arc, OnceLock};

use crate::agents::agent::{Agent, AgentError, Request};
use crate::agents::provider::http::{HttpEndpoint, HttpRequest};

/// What a turn sends and how the answer becomes the reply.
#[async_trait::async_trait]
pub trait HttpTarget: Send + Sync + std::fmt::Debug {
    /// The request for the turn's input; its error is the turn's (with its cause).
    async fn request(&self, input: &str) -> Result<HttpRequest, AgentError>;
    /// The reply in the answer's body; its error is the turn's (with its cause).
    async fn reply(&self, text: String) -> Result<String, AgentError>;
    /// The target's name (its URL).
    fn name(&self) -> String;
}

/// The agent of an [`HttpTarget`].
#[derive(Debug)]
pub struct HttpAgent {
    target: Arc<dyn HttpTarget>,
    endpoint: OnceLock<HttpEndpoint>,
}

impl HttpAgent {
    /// An agent whose turns are requests to `target`.
    pub fn new(target: Arc<dyn HttpTarget>) -> HttpAgent {
        HttpAgent {
            target,
            endpoint: OnceLock::new(),
        }
    }
}

#[async_trait::async_trait]
impl Agent for HttpAgent {
    async fn send(&self, request: Request) -> Result<(), AgentError> {
        let call = self.target.request(&request.input.text).await?;
        let endpoint = self.endpoint.get_or_init(|| HttpEndpoint::new(&call.url));
        let answer = endpoint
            .send(&call)
            .await
            .map_err(|e| AgentError::new(e.to_string()).caused_by(e))?;
        let reply = self.target.reply(answer.text).await?;
        request.events.say(reply);
        Ok(())
    }

    fn name(&self) -> String {
        self.target.name()
    }
}
