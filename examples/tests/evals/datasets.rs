//! A dataset eval: one eval per record of `datasets/capitals.jsonl`, each its own test
//! (`cargo test -p niceeval-examples --test evals datasets::capitals::peru`). Add, remove or edit
//! a line of the file: no code changes.

use niceeval::prelude::*;

/// A record of the dataset: the fields the eval reads (others, like `id`, are ignored).
#[derive(serde::Deserialize)]
struct Capital {
    question: String,
    answer: String,
}

/// A small deterministic geography agent.
fn geo_bot() -> impl Agent {
    agent_fn(|request: Request| async move {
        let question = request.input.text.to_lowercase();
        let capitals = [
            ("france", "Paris"),
            ("peru", "Lima"),
            ("japan", "Tokyo"),
            ("kenya", "Nairobi"),
        ];
        let answer = capitals
            .iter()
            .find(|(country, _)| question.contains(country))
            .map_or("I do not know.".to_string(), |(country, city)| {
                format!("The capital of {} is {city}.", capitalized(country))
            });
        request.events.say(answer);
        Ok(())
    })
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

#[eval(agent = geo_bot, cases = "datasets/capitals.jsonl", tags = ["dataset"])]
async fn capitals(t: &mut Eval, case: Capital) -> niceeval::Result {
    t.send(&case.question).await?;
    t.check(t.reply(), includes(&case.answer));
    Ok(())
}
