//! Nunjucks-style templates of suite files (`{{ var }}`, filters, `{% if %}`, `env.NAME`),
//! rendered with `minijinja`: undefined variables render empty as in nunjucks, nothing is
//! escaped, and nunjucks' `dump` filter is JSON.

use std::sync::OnceLock;

use minijinja::{Environment, UndefinedBehavior, Value as JValue};
use serde_json::{Map, Value};

fn environment() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::new();
        env.set_undefined_behavior(UndefinedBehavior::Lenient);
        // nunjucks keeps a template's last newline (a prompt file's own, a YAML block's).
        env.set_keep_trailing_newline(true);
        env.set_auto_escape_callback(|_| minijinja::AutoEscape::None);
        env.add_filter("dump", |v: JValue| -> Result<String, minijinja::Error> {
            serde_json::to_string(&v).map_err(|e| {
                minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string())
            })
        });
        env.add_filter("json", |v: JValue| -> Result<String, minijinja::Error> {
            serde_json::to_string(&v).map_err(|e| {
                minijinja::Error::new(minijinja::ErrorKind::InvalidOperation, e.to_string())
            })
        });
        // promptfoo's `load` filter: JSON text read as data.
        env.add_filter("load", |v: String| -> Result<JValue, minijinja::Error> {
            serde_json::from_str::<Value>(&v)
                .map(|v| JValue::from_serialize(&v))
                .map_err(|e| {
                    minijinja::Error::new(
                        minijinja::ErrorKind::InvalidOperation,
                        format!("`load` needs JSON text: {e}"),
                    )
                })
        });
        let vars: Map<String, Value> = std::env::vars()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        env.add_global("env", JValue::from_serialize(&vars));
        env
    })
}

/// A template minijinja cannot render; its error is kept.
#[derive(Debug, thiserror::Error)]
#[error("template error: {}", message(.0))]
pub struct TemplateError(#[source] minijinja::Error);

/// minijinja's message, with its detail when the message does not already hold it.
fn message(e: &minijinja::Error) -> String {
    let mut message = e.to_string();
    if let Some(detail) = e.detail()
        && !message.contains(detail)
    {
        message = format!("{message}: {detail}");
    }
    message
}

/// Renders `template` with `vars` (a text without `{{` / `{%` is returned as it is).
pub(crate) fn render(template: &str, vars: &Map<String, Value>) -> Result<String, TemplateError> {
    if !template.contains("{{") && !template.contains("{%") {
        return Ok(template.to_string());
    }
    environment()
        .render_str(template, vars)
        .map_err(TemplateError)
}

/// promptfoo's guard for a prompt with a tag left open (`{{` with no `}}` after it on its
/// line, `{%` with no `%`, `{#` with no `#`): the whole prompt is wrapped in
/// `{% raw %}…{% endraw %}`, so it is sent as written instead of failing to render. A
/// prompt already holding a raw block is left as it is.
pub(crate) fn raw_if_partial(template: &str) -> std::borrow::Cow<'_, str> {
    static PARTIAL: OnceLock<regex::Regex> = OnceLock::new();
    static RAW: OnceLock<(regex::Regex, regex::Regex)> = OnceLock::new();
    let partial = PARTIAL.get_or_init(|| {
        regex::Regex::new(r"(?m)(\{%[^%]*$|\{\{[^}]*$|\{#[^#]*$)").expect("a valid pattern")
    });
    let (open, close) = RAW.get_or_init(|| {
        (
            regex::Regex::new(r"\{%\s*raw\s*%\}").expect("a valid pattern"),
            regex::Regex::new(r"\{%\s*endraw\s*%\}").expect("a valid pattern"),
        )
    });
    if partial.is_match(template) && !(open.is_match(template) && close.is_match(template)) {
        std::borrow::Cow::Owned(format!("{{% raw %}}{template}{{% endraw %}}"))
    } else {
        std::borrow::Cow::Borrowed(template)
    }
}

/// Renders every string inside `value` (an assertion's `value` with the test's vars).
pub fn render_value(value: &Value, vars: &Map<String, Value>) -> Result<Value, TemplateError> {
    Ok(match value {
        Value::String(s) => Value::String(render(s, vars)?),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|v| render_value(v, vars))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| Ok((k.clone(), render_value(v, vars)?)))
                .collect::<Result<_, TemplateError>>()?,
        ),
        other => other.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_prompt_with_an_open_tag_is_sent_as_written() {
        // promptfoo's autoWrapRawIfPartialNunjucks: `{{` with no `}` after it on the line.
        let vars = json!({"name": "Ada"});
        let vars = vars.as_object().unwrap();
        let open = "Reply with {{ as a literal\nthen stop";
        assert_eq!(render(&raw_if_partial(open), vars).unwrap(), open);
        let closed = "Hello {{name}}";
        assert_eq!(raw_if_partial(closed), closed);
        assert_eq!(render(&raw_if_partial(closed), vars).unwrap(), "Hello Ada");
        let wrapped = "{% raw %}{{ x{% endraw %}";
        assert_eq!(raw_if_partial(wrapped), wrapped);
    }

    #[test]
    fn renders_nunjucks_style_templates() {
        let vars = json!({"name": "Ada", "items": [1, 2], "flag": true});
        let vars = vars.as_object().unwrap();
        assert_eq!(render("Hi {{ name }}!", vars).unwrap(), "Hi Ada!");
        assert_eq!(render("{{ name | upper }}", vars).unwrap(), "ADA");
        assert_eq!(render("{% if flag %}yes{% endif %}", vars).unwrap(), "yes");
        assert_eq!(render("[{{ missing }}]", vars).unwrap(), "[]");
        assert_eq!(render("{{ items | dump }}", vars).unwrap(), "[1,2]");
        let style = json!({"style": r#"{"tone": "formal"}"#});
        assert_eq!(
            render("{{ (style | load).tone }}", style.as_object().unwrap()).unwrap(),
            "formal"
        );
        assert_eq!(render("<{{ name }}>&", vars).unwrap(), "<Ada>&");
        assert_eq!(render("Hi {{ name }}\n", vars).unwrap(), "Hi Ada\n");
        let home = std::env::var("PATH").unwrap();
        assert_eq!(render("{{ env.PATH }}", vars).unwrap(), home);
        assert!(
            render("{% if %}", vars)
                .unwrap_err()
                .to_string()
                .contains("template error")
        );
    }
}
