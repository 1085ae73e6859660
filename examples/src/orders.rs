//! The shop's order book: a fixed, in-memory catalogue the demo bot's tools read.
//!
//! Everything here is constant, so every eval sees the same orders:
//!
//! | order | item                | total   | status                      |
//! |-------|---------------------|---------|-----------------------------|
//! | #123  | Blue ceramic mug    | $24.00  | delivered on 2024-05-02     |
//! | #456  | Espresso machine    | $349.00 | delivered on 2024-05-10     |
//! | #789  | Coffee beans (1 kg) | $32.50  | shipped, tracking `ZX-4471` |
//! | #321  | Milk frother        | $59.00  | paid, not shipped yet       |
//! | #654  | Travel tumbler      | $19.99  | already refunded            |
//!
//! Any other number is an unknown order: the bot's `lookup_order` tool call fails on it.

use serde_json::{Value, json};

/// Where an order is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderStatus {
    /// Paid, not shipped yet.
    Paid,
    /// On its way.
    Shipped,
    /// Delivered to the customer.
    Delivered,
    /// Refunded in full.
    Refunded,
}

impl OrderStatus {
    /// The status as it appears in tool output and structured data (`"shipped"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            OrderStatus::Paid => "paid",
            OrderStatus::Shipped => "shipped",
            OrderStatus::Delivered => "delivered",
            OrderStatus::Refunded => "refunded",
        }
    }
}

/// One order of the shop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Order {
    /// The order number, without `#`.
    pub id: &'static str,
    /// What was bought.
    pub item: &'static str,
    /// What the customer paid, in cents.
    pub total_cents: u64,
    /// Where the order is.
    pub status: OrderStatus,
    /// Parcel tracking number, once shipped.
    pub tracking: Option<&'static str>,
    /// Delivery date (ISO 8601), once delivered.
    pub delivered_on: Option<&'static str>,
}

impl Order {
    /// The order as the `lookup_order` tool returns it.
    ///
    /// ```
    /// let order = niceeval_examples::orders::find("789").unwrap();
    /// assert_eq!(order.to_json()["tracking"], "ZX-4471");
    /// ```
    pub fn to_json(&self) -> Value {
        let mut value = json!({
            "order_id": self.id,
            "item": self.item,
            "total_cents": self.total_cents,
            "status": self.status.as_str(),
        });
        if let Some(tracking) = self.tracking {
            value["tracking"] = json!(tracking);
        }
        if let Some(date) = self.delivered_on {
            value["delivered_on"] = json!(date);
        }
        value
    }
}

/// Every order of the shop.
pub const ORDERS: &[Order] = &[
    Order {
        id: "123",
        item: "Blue ceramic mug",
        total_cents: 2400,
        status: OrderStatus::Delivered,
        tracking: None,
        delivered_on: Some("2024-05-02"),
    },
    Order {
        id: "456",
        item: "Espresso machine",
        total_cents: 34900,
        status: OrderStatus::Delivered,
        tracking: None,
        delivered_on: Some("2024-05-10"),
    },
    Order {
        id: "789",
        item: "Coffee beans (1 kg)",
        total_cents: 3250,
        status: OrderStatus::Shipped,
        tracking: Some("ZX-4471"),
        delivered_on: None,
    },
    Order {
        id: "321",
        item: "Milk frother",
        total_cents: 5900,
        status: OrderStatus::Paid,
        tracking: None,
        delivered_on: None,
    },
    Order {
        id: "654",
        item: "Travel tumbler",
        total_cents: 1999,
        status: OrderStatus::Refunded,
        tracking: None,
        delivered_on: None,
    },
];

/// The order with this number (without `#`), if the shop has one.
///
/// ```
/// use niceeval_examples::orders::find;
///
/// assert_eq!(find("123").unwrap().item, "Blue ceramic mug");
/// assert!(find("999").is_none());
/// ```
pub fn find(id: &str) -> Option<&'static Order> {
    ORDERS.iter().find(|order| order.id == id)
}

/// Formats cents as dollars: `2400` → `$24.00`.
///
/// ```
/// assert_eq!(niceeval_examples::orders::dollars(34900), "$349.00");
/// assert_eq!(niceeval_examples::orders::dollars(1999), "$19.99");
/// ```
pub fn dollars(cents: u64) -> String {
    format!("${}.{:02}", cents / 100, cents % 100)
}
