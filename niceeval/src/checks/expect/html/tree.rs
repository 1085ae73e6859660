//! The document tree `is-html` reads: html5ever's HTML5 tree construction into a small tree
//! that keeps, for each element, whether the text wrote its start tag (parse5's source
//! location) or the parser implied it (an `<html>`, `<head>` or `<body>` the text never
//! wrote).
//!
//! html5ever tells a tree sink nothing of where an element came from, so the tokens pass
//! through [`Watch`] on their way to the tree builder: an element created while the builder
//! handles a start tag of the same name is that tag's element; one created under another token
//! is implied.

use std::borrow::Cow;
use std::cell::RefCell;
use std::rc::{Rc, Weak};

use html5ever::TokenizerResult;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::tree_builder::{
    ElementFlags, NodeOrText, QuirksMode, TreeBuilder, TreeBuilderOpts, TreeSink,
};
use html5ever::{Attribute, LocalName, QualName, ns};

/// A node of the tree: the document, an element, or a node `is-html` ignores (comment,
/// processing instruction, a template's contents).
pub(super) struct Node {
    name: Option<QualName>,
    own_tag: bool,
    integration_point: bool,
    contents: Option<Rc<Node>>,
    children: RefCell<Vec<Child>>,
    parent: RefCell<Weak<Node>>,
}

enum Child {
    Node(Rc<Node>),
    Text(String),
}

impl Node {
    fn new(name: Option<QualName>) -> Rc<Node> {
        Rc::new(Node {
            name,
            own_tag: false,
            integration_point: false,
            contents: None,
            children: RefCell::new(Vec::new()),
            parent: RefCell::new(Weak::new()),
        })
    }

    /// The element's local name (parse5's `tagName`); empty for other nodes.
    pub(super) fn name(&self) -> &str {
        self.name.as_ref().map_or("", |n| &n.local)
    }

    /// Whether the text wrote this element's start tag.
    pub(super) fn written_by_its_tag(&self) -> bool {
        self.own_tag
    }

    /// Whether a text child of this node holds more than white space (`space` says what is).
    pub(super) fn has_loose_text(&self, space: fn(char) -> bool) -> bool {
        self.children.borrow().iter().any(|c| match c {
            Child::Text(t) => t.chars().any(|c| !space(c)),
            Child::Node(_) => false,
        })
    }
}

/// The first element, in document order, that `pick` accepts (a template's contents are not
/// searched, as they are not children of the template).
pub(super) fn first_element(root: &Rc<Node>, pick: impl Fn(&Node) -> bool) -> Option<Rc<Node>> {
    let mut stack = vec![root.clone()];
    while let Some(node) = stack.pop() {
        if node.name.is_some() && pick(&node) {
            return Some(node);
        }
        for child in node.children.borrow().iter().rev() {
            if let Child::Node(n) = child {
                stack.push(n.clone());
            }
        }
    }
    None
}

/// Parses `text` as an HTML document.
pub(super) fn parse(text: &str) -> Rc<Node> {
    let sink = Sink {
        document: Node::new(None),
        start_tag: RefCell::new(None),
        placeholder: QualName::new(None, ns!(html), LocalName::from("")),
    };
    let tokenizer = Tokenizer::new(
        Watch(TreeBuilder::new(sink, TreeBuilderOpts::default())),
        TokenizerOpts::default(),
    );
    let queue = BufferQueue::default();
    queue.push_back(StrTendril::from(text));
    while let TokenizerResult::Script(_) = tokenizer.feed(&queue) {}
    tokenizer.end();
    tokenizer.sink.0.sink.document.clone()
}

/// The tree builder, with the name of the start tag it is handling kept for the sink.
struct Watch(TreeBuilder<Rc<Node>, Sink>);

impl TokenSink for Watch {
    type Handle = Rc<Node>;

    fn process_token(&self, token: Token, line_number: u64) -> TokenSinkResult<Rc<Node>> {
        let start = match &token {
            Token::TagToken(tag) if tag.kind == TagKind::StartTag => Some(tag.name.clone()),
            _ => None,
        };
        *self.0.sink.start_tag.borrow_mut() = start;
        let result = self.0.process_token(token, line_number);
        *self.0.sink.start_tag.borrow_mut() = None;
        result
    }

    fn end(&self) {
        self.0.end();
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.0
            .adjusted_current_node_present_but_not_in_html_namespace()
    }
}

struct Sink {
    document: Rc<Node>,
    start_tag: RefCell<Option<LocalName>>,
    /// The name given for a node that is not an element (the builder never asks).
    placeholder: QualName,
}

fn detach(node: &Rc<Node>) {
    let parent = node.parent.replace(Weak::new());
    if let Some(parent) = parent.upgrade() {
        parent
            .children
            .borrow_mut()
            .retain(|c| !matches!(c, Child::Node(n) if Rc::ptr_eq(n, node)));
    }
}

fn push(parent: &Rc<Node>, child: NodeOrText<Rc<Node>>) {
    match child {
        NodeOrText::AppendNode(node) => {
            detach(&node);
            *node.parent.borrow_mut() = Rc::downgrade(parent);
            parent.children.borrow_mut().push(Child::Node(node));
        }
        NodeOrText::AppendText(text) => {
            let mut children = parent.children.borrow_mut();
            match children.last_mut() {
                Some(Child::Text(last)) => last.push_str(&text),
                _ => children.push(Child::Text(text.to_string())),
            }
        }
    }
}

impl TreeSink for Sink {
    type Handle = Rc<Node>;
    type Output = Rc<Node>;
    type ElemName<'a> = &'a QualName;

    fn finish(self) -> Rc<Node> {
        self.document
    }

    fn parse_error(&self, _msg: Cow<'static, str>) {}

    fn get_document(&self) -> Rc<Node> {
        self.document.clone()
    }

    fn elem_name<'a>(&'a self, target: &'a Rc<Node>) -> &'a QualName {
        target.name.as_ref().unwrap_or(&self.placeholder)
    }

    fn create_element(&self, name: QualName, _: Vec<Attribute>, flags: ElementFlags) -> Rc<Node> {
        let own_tag = name.ns == ns!(html)
            && self
                .start_tag
                .borrow()
                .as_ref()
                .is_some_and(|tag| *tag == name.local);
        Rc::new(Node {
            name: Some(name),
            own_tag,
            integration_point: flags.mathml_annotation_xml_integration_point,
            contents: flags.template.then(|| Node::new(None)),
            children: RefCell::new(Vec::new()),
            parent: RefCell::new(Weak::new()),
        })
    }

    fn create_comment(&self, _text: StrTendril) -> Rc<Node> {
        Node::new(None)
    }

    fn create_pi(&self, _target: StrTendril, _data: StrTendril) -> Rc<Node> {
        Node::new(None)
    }

    fn append(&self, parent: &Rc<Node>, child: NodeOrText<Rc<Node>>) {
        push(parent, child);
    }

    fn append_based_on_parent_node(
        &self,
        element: &Rc<Node>,
        prev_element: &Rc<Node>,
        child: NodeOrText<Rc<Node>>,
    ) {
        if element.parent.borrow().upgrade().is_some() {
            self.append_before_sibling(element, child);
        } else {
            push(prev_element, child);
        }
    }

    fn append_doctype_to_document(&self, _: StrTendril, _: StrTendril, _: StrTendril) {}

    fn get_template_contents(&self, target: &Rc<Node>) -> Rc<Node> {
        target.contents.clone().unwrap_or_else(|| target.clone())
    }

    fn same_node(&self, x: &Rc<Node>, y: &Rc<Node>) -> bool {
        Rc::ptr_eq(x, y)
    }

    fn set_quirks_mode(&self, _mode: QuirksMode) {}

    fn append_before_sibling(&self, sibling: &Rc<Node>, new_node: NodeOrText<Rc<Node>>) {
        let Some(parent) = sibling.parent.borrow().upgrade() else {
            return;
        };
        if let NodeOrText::AppendNode(node) = &new_node {
            detach(node);
        }
        let mut children = parent.children.borrow_mut();
        let Some(at) = children
            .iter()
            .position(|c| matches!(c, Child::Node(n) if Rc::ptr_eq(n, sibling)))
        else {
            return;
        };
        match new_node {
            NodeOrText::AppendNode(node) => {
                *node.parent.borrow_mut() = Rc::downgrade(&parent);
                children.insert(at, Child::Node(node));
            }
            NodeOrText::AppendText(text) => match at.checked_sub(1).map(|i| &mut children[i]) {
                Some(Child::Text(before)) => before.push_str(&text),
                _ => children.insert(at, Child::Text(text.to_string())),
            },
        }
    }

    fn add_attrs_if_missing(&self, _target: &Rc<Node>, _attrs: Vec<Attribute>) {}

    fn remove_from_parent(&self, target: &Rc<Node>) {
        detach(target);
    }

    fn reparent_children(&self, node: &Rc<Node>, new_parent: &Rc<Node>) {
        let moved = std::mem::take(&mut *node.children.borrow_mut());
        let mut children = new_parent.children.borrow_mut();
        for child in moved {
            if let Child::Node(n) = &child {
                *n.parent.borrow_mut() = Rc::downgrade(new_parent);
            }
            children.push(child);
        }
    }

    fn is_mathml_annotation_xml_integration_point(&self, handle: &Rc<Node>) -> bool {
        handle.integration_point
    }
}
