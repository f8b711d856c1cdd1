//! Search helpers that have no registry state.

/// The sentences of a multi-sentence query that hybrid search embeds beside the whole query
/// (empty for a single sentence).
#[napi_derive::napi(js_name = "querySentences")]
pub fn query_sentences(query: String) -> Vec<String> {
    crate::search::query_sentences(&query)
        .into_iter()
        .map(str::to_owned)
        .collect()
}
