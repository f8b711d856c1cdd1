//! Property tests: spelling differences that JSON considers equal never change the canonical
//! text or the digest, and real differences always do.

use proptest::prelude::*;
use serde_json::{Map, Value};
use toolreg_trust::{canonical_json, digest, same_canonical};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| Value::from(i64::from(n))),
        (-1e12f64..1e12).prop_map(Value::from),
        "[a-zA-Z0-9 \"\\\\\u{1}é€😀\u{fb33}]{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[a-z€😀\u{fb33}]{1,4}", inner, 0..5)
                .prop_map(|map| Value::Object(map.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Writes `value` with keys in reverse order, extra whitespace and integers as `N.0`.
fn respell(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            out.push_str("{ ");
            let entries: Vec<_> = map.iter().rev().collect();
            for (index, (key, item)) in entries.into_iter().enumerate() {
                if index > 0 {
                    out.push_str(" ,\n ");
                }
                out.push_str(&serde_json::to_string(key).unwrap());
                out.push_str(" :\t");
                respell(item, out);
            }
            out.push_str(" }");
        }
        Value::Array(items) => {
            out.push_str("[ ");
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push_str(" , ");
                }
                respell(item, out);
            }
            out.push_str(" ]");
        }
        Value::Number(number) if number.is_i64() => out.push_str(&format!("{number}.0")),
        other => out.push_str(&other.to_string()),
    }
}

proptest! {
    #[test]
    fn order_whitespace_and_integer_spelling_do_not_change_the_canonical_text(value in json_value()) {
        let mut text = String::new();
        respell(&value, &mut text);
        let reparsed: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(canonical_json(&reparsed), canonical_json(&value));
        prop_assert!(same_canonical(&reparsed, &value));
        let tool = serde_json::json!({"name": "t", "inputSchema": value});
        let respelled_tool = serde_json::json!({"inputSchema": reparsed, "name": "t"});
        prop_assert_eq!(digest(&tool), digest(&respelled_tool));
    }

    #[test]
    fn canonical_text_is_valid_json_and_a_fixed_point(value in json_value()) {
        let text = canonical_json(&value);
        let reparsed: Value = serde_json::from_str(&text).unwrap();
        prop_assert_eq!(canonical_json(&reparsed), text);
    }

    #[test]
    fn different_values_have_different_canonical_texts(a in json_value(), b in json_value()) {
        prop_assert_eq!(canonical_json(&a) == canonical_json(&b), same_canonical(&a, &b));
    }

    #[test]
    fn doubles_print_like_ecmascript_and_round_trip(x in any::<f64>().prop_filter("finite", |x| x.is_finite())) {
        let text = canonical_json(&Value::from(x));
        let back: f64 = text.parse().unwrap();
        prop_assert_eq!(back, if x == 0.0 { 0.0 } else { x });
        // ECMAScript uses an exponent exactly when |x| < 1e-6 or |x| >= 1e21.
        let magnitude = x.abs();
        let has_exponent = text.contains('e');
        prop_assert_eq!(has_exponent, magnitude != 0.0 && !(1e-6..1e21).contains(&magnitude), "{}", text);
    }
}
