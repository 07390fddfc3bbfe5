#include "Condition.h"

#include <variant>

namespace ty::pipeline {

struct Condition::Node {
    enum class Kind { Or, And, Not, Compare, Name, Literal } kind = Kind::Literal;
    QString op;    // Compare: the operator
    QString value; // Name: the name; Literal: the text
    std::shared_ptr<const Node> left, right;
};

namespace {

using Node = Condition::Node;
using NodePtr = std::shared_ptr<const Node>;

struct Error {
    int offset;
    QString message;
};

class Parser {
public:
    explicit Parser(const QString& text)
        : m_s(text)
    { }

    NodePtr parseAll(QStringList& names)
    {
        m_names = &names;
        skipSpace();
        if (m_i >= m_s.size())
            throw Error{0, QStringLiteral("the condition is empty")};
        NodePtr n = parseOr();
        skipSpace();
        if (m_i < m_s.size())
            throw Error{int(m_i), QStringLiteral("unexpected '%1'").arg(m_s.mid(m_i, 8))};
        return n;
    }

private:
    void skipSpace()
    {
        while (m_i < m_s.size() && m_s.at(m_i).isSpace())
            ++m_i;
    }
    bool eat(QStringView token)
    {
        skipSpace();
        if (QStringView(m_s).mid(m_i).startsWith(token)) {
            m_i += token.size();
            return true;
        }
        return false;
    }
    static NodePtr make(Node::Kind kind, NodePtr l, NodePtr r, QString op = {})
    {
        auto n = std::make_shared<Node>();
        n->kind = kind;
        n->left = std::move(l);
        n->right = std::move(r);
        n->op = std::move(op);
        return n;
    }
    NodePtr parseOr()
    {
        NodePtr l = parseAnd();
        while (eat(u"||"))
            l = make(Node::Kind::Or, l, parseAnd());
        return l;
    }
    NodePtr parseAnd()
    {
        NodePtr l = parseUnary();
        while (eat(u"&&"))
            l = make(Node::Kind::And, l, parseUnary());
        return l;
    }
    NodePtr parseUnary()
    {
        skipSpace();
        // `!` but not `!=`.
        if (m_i < m_s.size() && m_s.at(m_i) == u'!' && !(m_i + 1 < m_s.size() && m_s.at(m_i + 1) == u'=')) {
            ++m_i;
            return make(Node::Kind::Not, parseUnary(), nullptr);
        }
        return parseCompare();
    }
    NodePtr parseCompare()
    {
        NodePtr l = parseOperand();
        for (QStringView op : {u"==", u"!=", u"<=", u">=", u"<", u">"})
            if (eat(op))
                return make(Node::Kind::Compare, l, parseOperand(), op.toString());
        return l;
    }
    NodePtr parseOperand()
    {
        skipSpace();
        if (m_i >= m_s.size())
            throw Error{int(m_i), QStringLiteral("the condition ends where a value was expected")};
        const QChar c = m_s.at(m_i);
        if (c == u'(') {
            const qsizetype open = m_i++;
            NodePtr n = parseOr();
            if (!eat(u")"))
                throw Error{int(open), QStringLiteral("'(' is never closed")};
            return n;
        }
        auto n = std::make_shared<Node>();
        if (c == u'\'' || c == u'"') {
            const qsizetype start = m_i++;
            const qsizetype end = m_s.indexOf(c, m_i);
            if (end < 0)
                throw Error{int(start), QStringLiteral("the quoted text is never closed")};
            n->kind = Node::Kind::Literal;
            n->value = m_s.mid(m_i, end - m_i);
            m_i = end + 1;
            return n;
        }
        if (c.isDigit() || c == u'-' || c == u'+' || c == u'.') {
            const qsizetype start = m_i;
            ++m_i;
            while (m_i < m_s.size()
                    && (m_s.at(m_i).isLetterOrNumber() || m_s.at(m_i) == u'.' || m_s.at(m_i) == u'-'
                            || m_s.at(m_i) == u'+'))
                ++m_i;
            n->kind = Node::Kind::Literal;
            n->value = m_s.mid(start, m_i - start);
            bool ok = false;
            n->value.toDouble(&ok);
            if (!ok)
                throw Error{int(start), QStringLiteral("'%1' is not a number").arg(n->value)};
            return n;
        }
        if (c.isLetter() || c == u'_') {
            const qsizetype start = m_i;
            while (m_i < m_s.size()
                    && (m_s.at(m_i).isLetterOrNumber() || m_s.at(m_i) == u'_' || m_s.at(m_i) == u'.'
                            || m_s.at(m_i) == u'-'))
                ++m_i;
            const QString word = m_s.mid(start, m_i - start);
            if (word.endsWith(u'.'))
                throw Error{int(m_i - 1), QStringLiteral("a name cannot end with '.'")};
            if (word == u"true" || word == u"false") {
                n->kind = Node::Kind::Literal;
                n->value = word;
                return n;
            }
            n->kind = Node::Kind::Name;
            n->value = word;
            if (!m_names->contains(word))
                m_names->append(word);
            return n;
        }
        throw Error{int(m_i), QStringLiteral("unexpected '%1'").arg(c)};
    }

    const QString& m_s;
    qsizetype m_i = 0;
    QStringList* m_names = nullptr;
};

std::optional<double> number(const QString& s)
{
    bool ok = false;
    const double d = s.toDouble(&ok);
    return ok ? std::optional<double>(d) : std::nullopt;
}

std::optional<bool> truth(const QString& s)
{
    const QString l = s.trimmed().toLower();
    if (l == u"true" || l == u"yes" || l == u"1")
        return true;
    if (l == u"false" || l == u"no" || l == u"0")
        return false;
    return std::nullopt;
}

using Lookup = std::function<std::optional<QString>(const QString&)>;

struct Evaluator {
    const Lookup& lookup;

    QString value(const Node& n) const
    {
        switch (n.kind) {
        case Node::Kind::Literal: return n.value;
        case Node::Kind::Name: {
            const auto v = lookup(n.value);
            if (!v)
                throw Error{0, QStringLiteral("'%1' has no value").arg(n.value)};
            return *v;
        }
        default: return truthOf(n) ? QStringLiteral("true") : QStringLiteral("false");
        }
    }

    bool truthOf(const Node& n) const
    {
        switch (n.kind) {
        case Node::Kind::Or: return truthOf(*n.left) || truthOf(*n.right);
        case Node::Kind::And: return truthOf(*n.left) && truthOf(*n.right);
        case Node::Kind::Not: return !truthOf(*n.left);
        case Node::Kind::Compare: return compare(n);
        case Node::Kind::Name:
        case Node::Kind::Literal: {
            const QString v = value(n);
            const auto t = truth(v);
            if (!t)
                throw Error{0,
                        n.kind == Node::Kind::Name
                                ? QStringLiteral("'%1' is '%2', which is neither true nor false").arg(n.value, v)
                                : QStringLiteral("'%1' is neither true nor false").arg(v)};
            return *t;
        }
        }
        return false;
    }

    bool compare(const Node& n) const
    {
        const QString a = value(*n.left), b = value(*n.right);
        const auto x = number(a), y = number(b);
        if (n.op == u"==" || n.op == u"!=") {
            const bool equal = (x && y) ? *x == *y : a == b;
            return n.op == u"==" ? equal : !equal;
        }
        if (!x || !y)
            throw Error{0, QStringLiteral("'%1' compares numbers, and '%2' is not one").arg(n.op, x ? b : a)};
        if (n.op == u"<")
            return *x < *y;
        if (n.op == u"<=")
            return *x <= *y;
        if (n.op == u">")
            return *x > *y;
        return *x >= *y;
    }
};

} // namespace

std::expected<Condition, Condition::ParseError> Condition::parse(const QString& text)
{
    Condition c;
    c.m_text = text;
    try {
        Parser p(c.m_text);
        c.m_root = p.parseAll(c.m_names);
    } catch (const Error& e) {
        return std::unexpected(ParseError{e.offset, e.message});
    }
    return c;
}

Result<bool> Condition::evaluate(const Lookup& lookup) const
{
    try {
        return Evaluator{lookup}.truthOf(*m_root);
    } catch (const Error& e) {
        return fail(QStringLiteral("condition '%1': %2").arg(m_text, e.message));
    }
}

} // namespace ty::pipeline
