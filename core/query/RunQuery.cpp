#include "RunQuery.h"

#include <QList>
#include <QRegularExpression>

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

namespace ty {

// ---- the tree ----------------------------------------------------------------

struct RunQuery::Node {
    enum class Kind { And, Or, Not, Compare, NameContains, Has };
    enum class Field { Param, Metric, Tag, State, NodeName, Queue, User, Project, Name, Id, Group, Step };
    enum class Op { Lt, Le, Gt, Ge, Eq, Ne, Match, NoMatch, Contains };

    Kind kind = Kind::Compare;
    std::vector<std::shared_ptr<const Node>> kids; // And, Or (>= 2), Not (1)
    Field field = Field::Param;
    Op op = Op::Eq;
    QString key;   // param or metric name; Has: the name
    QString value; // as written (quotes removed)
    bool quoted = false;
    std::optional<double> number;          // value as a number, when it is one
    QRegularExpression re;                 // Match, NoMatch
    QList<RunState> states;                // State with Eq, Ne
    std::optional<RunGroupKind> groupKind; // Group: by kind (else `number` is the group's id)
};

namespace {

using Node = RunQuery::Node;
using NodePtr = std::shared_ptr<const Node>;
using Kind = Node::Kind;
using Field = Node::Field;
using Op = Node::Op;

QString opSymbol(Op op)
{
    switch (op) {
    case Op::Lt: return QStringLiteral("<");
    case Op::Le: return QStringLiteral("<=");
    case Op::Gt: return QStringLiteral(">");
    case Op::Ge: return QStringLiteral(">=");
    case Op::Eq: return QStringLiteral("=");
    case Op::Ne: return QStringLiteral("!=");
    case Op::Match: return QStringLiteral("~");
    case Op::NoMatch: return QStringLiteral("!~");
    case Op::Contains: return QStringLiteral("contains");
    }
    return {};
}

QString fieldName(Field f)
{
    switch (f) {
    case Field::Param: return QStringLiteral("param");
    case Field::Metric: return QStringLiteral("metric");
    case Field::Tag: return QStringLiteral("tag");
    case Field::State: return QStringLiteral("state");
    case Field::NodeName: return QStringLiteral("node");
    case Field::Queue: return QStringLiteral("queue");
    case Field::User: return QStringLiteral("user");
    case Field::Project: return QStringLiteral("project");
    case Field::Name: return QStringLiteral("name");
    case Field::Id: return QStringLiteral("id");
    case Field::Group: return QStringLiteral("group");
    case Field::Step: return QStringLiteral("step");
    }
    return {};
}

bool isOpChar(QChar c)
{
    return c == u'<' || c == u'>' || c == u'=' || c == u'!' || c == u'~' || c == u':';
}

bool isQuote(QChar c)
{
    return c == u'"' || c == u'\'';
}

bool isParen(QChar c)
{
    return c == u'(' || c == u')';
}

bool isKeyword(QStringView w)
{
    return w.compare(u"and", Qt::CaseInsensitive) == 0 || w.compare(u"or", Qt::CaseInsensitive) == 0
            || w.compare(u"not", Qt::CaseInsensitive) == 0;
}

// State names and the groups a query may use for them.
struct StateAlias {
    const char16_t* name;
    QList<RunState> states;
};

const QList<StateAlias>& stateAliases()
{
    static const QList<StateAlias> aliases = {
            {u"active", {RunState::Starting, RunState::Running}},
            {u"pending", {RunState::Queued, RunState::Held}},
            {u"finished", {RunState::Succeeded, RunState::Failed, RunState::Cancelled}},
    };
    return aliases;
}

std::optional<QList<RunState>> statesNamed(const QString& text)
{
    const QString lower = text.toLower();
    if (auto s = runStateFromName(lower))
        return QList<RunState>{*s};
    for (const StateAlias& a : stateAliases())
        if (lower == QStringView(a.name))
            return a.states;
    return std::nullopt;
}

QString knownStateNames()
{
    QStringList names;
    for (RunState s : {RunState::Queued, RunState::Held, RunState::Starting, RunState::Running, RunState::Succeeded,
                 RunState::Failed, RunState::Cancelled, RunState::Unknown})
        names << runStateName(s);
    for (const StateAlias& a : stateAliases())
        names << QString::fromUtf16(a.name);
    return names.join(QStringLiteral(", "));
}

// Recursive descent over the text; one error (the first) stops it.
class Parser {
public:
    explicit Parser(QStringView text)
        : m_s(text)
    { }

    Result<NodePtr> run()
    {
        skipSpace();
        if (atEnd())
            return NodePtr{};
        NodePtr root = parseOr(QStringLiteral("at the start"));
        if (root && !atEnd()) {
            if (peek() == u')')
                error(m_pos, QStringLiteral("unexpected ')' (no '(' to close)"));
            else
                error(m_pos, QStringLiteral("unexpected '%1'").arg(peek()));
        }
        if (!m_error.isEmpty())
            return fail(m_error);
        return root;
    }

    bool usesLabels() const { return m_usesLabels; }

private:
    bool atEnd() const { return m_pos >= m_s.size(); }
    QChar peek() const { return atEnd() ? QChar() : m_s.at(m_pos); }
    void skipSpace()
    {
        while (!atEnd() && peek().isSpace())
            ++m_pos;
    }
    // 1-based column of position `pos`.
    static qsizetype col(qsizetype pos) { return pos + 1; }

    std::nullptr_t error(qsizetype pos, const QString& what)
    {
        if (m_error.isEmpty())
            m_error = QStringLiteral("column %1: %2").arg(col(pos)).arg(what);
        return nullptr;
    }

    // A word: up to a space, a parenthesis, a quote or an operator character.
    QStringView peekWord() const
    {
        qsizetype end = m_pos;
        while (end < m_s.size()) {
            const QChar c = m_s.at(end);
            if (c.isSpace() || isParen(c) || isQuote(c) || isOpChar(c))
                break;
            ++end;
        }
        return m_s.mid(m_pos, end - m_pos);
    }

    bool peekKeyword(QStringView kw)
    {
        skipSpace();
        return peekWord().compare(kw, Qt::CaseInsensitive) == 0;
    }

    // What may follow a term that ends an and-sequence.
    bool atAndEnd()
    {
        skipSpace();
        return atEnd() || peek() == u')' || peekKeyword(u"or");
    }

    NodePtr parseOr(const QString& context)
    {
        NodePtr first = parseAnd(context);
        if (!first)
            return nullptr;
        std::vector<NodePtr> kids{first};
        while (peekKeyword(u"or")) {
            m_pos += 2;
            NodePtr next = parseAnd(QStringLiteral("after 'or'"));
            if (!next)
                return nullptr;
            kids.push_back(next);
        }
        return combine(Kind::Or, std::move(kids));
    }

    NodePtr parseAnd(const QString& context)
    {
        NodePtr first = parseNot(context);
        if (!first)
            return nullptr;
        std::vector<NodePtr> kids{first};
        while (!atAndEnd()) {
            QString ctx = QStringLiteral("here");
            if (peekKeyword(u"and")) {
                m_pos += 3;
                ctx = QStringLiteral("after 'and'");
            }
            NodePtr next = parseNot(ctx);
            if (!next)
                return nullptr;
            kids.push_back(next);
        }
        return combine(Kind::And, std::move(kids));
    }

    static NodePtr combine(Kind kind, std::vector<NodePtr> kids)
    {
        if (kids.size() == 1)
            return kids.front();
        auto n = std::make_shared<Node>();
        n->kind = kind;
        n->kids = std::move(kids);
        return n;
    }

    NodePtr parseNot(const QString& context)
    {
        if (peekKeyword(u"not")) {
            m_pos += 3;
            NodePtr inner = parseNot(QStringLiteral("after 'not'"));
            if (!inner)
                return nullptr;
            auto n = std::make_shared<Node>();
            n->kind = Kind::Not;
            n->kids.push_back(inner);
            return n;
        }
        return parsePrimary(context);
    }

    NodePtr parsePrimary(const QString& context)
    {
        skipSpace();
        if (atEnd())
            return error(m_pos, QStringLiteral("expected a term %1").arg(context));
        const QChar c = peek();
        const qsizetype start = m_pos;
        if (c == u'(') {
            ++m_pos;
            skipSpace();
            if (peek() == u')')
                return error(m_pos, QStringLiteral("empty parentheses"));
            NodePtr inner = parseOr(QStringLiteral("after '('"));
            if (!inner)
                return nullptr;
            skipSpace();
            if (peek() != u')')
                return error(m_pos, QStringLiteral("missing ')' for the '(' at column %1").arg(col(start)));
            ++m_pos;
            return inner;
        }
        if (c == u')')
            return error(m_pos, QStringLiteral("expected a term %1, found ')'").arg(context));
        if (isQuote(c)) {
            auto text = readQuoted();
            if (!text)
                return nullptr;
            auto n = std::make_shared<Node>();
            n->kind = Kind::NameContains;
            n->value = *text;
            n->quoted = true;
            return n;
        }
        if (isOpChar(c)) {
            const auto op = readOp();
            if (!op)
                return nullptr;
            return error(start, QStringLiteral("expected a name before '%1'").arg(*op));
        }

        const QString word = peekWord().toString();
        m_pos += word.size();
        if (isKeyword(word))
            return error(start, QStringLiteral("expected a term %1, found '%2'").arg(context, word));

        skipSpace();
        if (atEnd() || !isOpChar(peek())) {
            auto n = std::make_shared<Node>();
            n->kind = Kind::NameContains;
            n->value = word;
            return n;
        }
        const qsizetype opPos = m_pos;
        const auto op = readOp();
        if (!op)
            return nullptr;
        return parseComparison(word, start, *op, opPos);
    }

    // The operator at m_pos, longest first. Errors on a lone '!'.
    std::optional<QString> readOp()
    {
        static const QStringList ops = {QStringLiteral("<="), QStringLiteral(">="), QStringLiteral("=="),
                QStringLiteral("!="), QStringLiteral("!~"), QStringLiteral("<"), QStringLiteral(">"),
                QStringLiteral("="), QStringLiteral("~"), QStringLiteral(":")};
        const QStringView rest = m_s.mid(m_pos);
        for (const QString& op : ops) {
            if (rest.startsWith(op)) {
                m_pos += op.size();
                return op;
            }
        }
        error(m_pos, QStringLiteral("unknown operator '%1' (use !=, !~ or not)").arg(peek()));
        return std::nullopt;
    }

    // A quoted string at m_pos: \" \' and \\ stand for the character; any
    // other backslash is kept (regular expressions need them).
    std::optional<QString> readQuoted()
    {
        const qsizetype start = m_pos;
        const QChar q = peek();
        ++m_pos;
        QString out;
        while (!atEnd()) {
            const QChar c = peek();
            if (c == q) {
                ++m_pos;
                return out;
            }
            if (c == u'\\' && m_pos + 1 < m_s.size()) {
                const QChar next = m_s.at(m_pos + 1);
                if (next == u'"' || next == u'\'' || next == u'\\') {
                    out += next;
                    m_pos += 2;
                    continue;
                }
            }
            out += c;
            ++m_pos;
        }
        error(start, QStringLiteral("unterminated quoted text (no closing %1)").arg(q));
        return std::nullopt;
    }

    struct Value {
        QString text;
        qsizetype pos = 0; // where it starts (its opening quote when quoted)
        bool quoted = false;
    };

    std::optional<Value> readValue(const QString& op)
    {
        skipSpace();
        Value v;
        v.pos = m_pos;
        if (atEnd() || isParen(peek())) {
            error(m_pos, QStringLiteral("expected a value after '%1'").arg(op));
            return std::nullopt;
        }
        if (isQuote(peek())) {
            auto text = readQuoted();
            if (!text)
                return std::nullopt;
            v.text = *text;
            v.quoted = true;
            return v;
        }
        if (isOpChar(peek())) {
            error(m_pos,
                    QStringLiteral("expected a value after '%1', found '%2' (quote a value that starts with it)")
                            .arg(op, peek()));
            return std::nullopt;
        }
        qsizetype end = m_pos;
        while (end < m_s.size() && !m_s.at(end).isSpace() && !isParen(m_s.at(end)))
            ++end;
        v.text = m_s.mid(m_pos, end - m_pos).toString();
        if (isKeyword(v.text)) {
            error(m_pos, QStringLiteral("expected a value after '%1', found '%2'").arg(op, v.text));
            return std::nullopt;
        }
        m_pos = end;
        return v;
    }

    static std::optional<Op> opFrom(const QString& op)
    {
        if (op == u"<")
            return Op::Lt;
        if (op == u"<=")
            return Op::Le;
        if (op == u">")
            return Op::Gt;
        if (op == u">=")
            return Op::Ge;
        if (op == u"=" || op == u"==")
            return Op::Eq;
        if (op == u"!=")
            return Op::Ne;
        if (op == u"~")
            return Op::Match;
        if (op == u"!~")
            return Op::NoMatch;
        return std::nullopt; // ':' depends on the field
    }

    NodePtr parseComparison(const QString& word, qsizetype wordPos, const QString& opText, qsizetype opPos)
    {
        const QString lower = word.toLower();
        auto n = std::make_shared<Node>();
        n->kind = Kind::Compare;

        // Which field or param?
        const bool colon = opText == u":";
        bool isField = true;
        if (lower == u"tag" || lower == u"tags")
            n->field = Field::Tag;
        else if (lower == u"state")
            n->field = Field::State;
        else if (lower == u"node")
            n->field = Field::NodeName;
        else if (lower == u"queue")
            n->field = Field::Queue;
        else if (lower == u"user")
            n->field = Field::User;
        else if (lower == u"project")
            n->field = Field::Project;
        else if (lower == u"name")
            n->field = Field::Name;
        else if (lower == u"id")
            n->field = Field::Id;
        else if (lower == u"group")
            n->field = Field::Group;
        else if (lower == u"step")
            n->field = Field::Step;
        else if (lower == u"has") {
            if (!colon)
                return error(opPos, QStringLiteral("'has' takes ':' (has:lr), not '%1'").arg(opText));
            auto v = readValue(opText);
            if (!v)
                return nullptr;
            n->kind = Kind::Has;
            n->value = v->text;
            n->quoted = v->quoted;
            return n;
        } else {
            isField = false;
            n->field = Field::Param;
            n->key = word;
            for (const auto& [prefix, field] : {std::pair{u"params.", Field::Param}, std::pair{u"param.", Field::Param},
                         std::pair{u"metrics.", Field::Metric}, std::pair{u"metric.", Field::Metric}}) {
                const QStringView p(prefix);
                if (lower.startsWith(p)) {
                    n->field = field;
                    n->key = word.mid(p.size());
                    if (n->key.isEmpty())
                        return error(
                                wordPos, QStringLiteral("expected a %1 name after '%2'").arg(fieldName(field), word));
                    break;
                }
            }
        }
        if (colon && !isField)
            return error(wordPos,
                    QStringLiteral("unknown field '%1' before ':' (fields: tag, state, node, queue, user, "
                                   "project, name, group, step, has; compare a param with '=': %1 = ...)")
                            .arg(word));
        if (n->field == Field::Queue || n->field == Field::User || n->field == Field::Project)
            m_usesLabels = true;

        // Which operator?
        std::optional<Op> op = opFrom(opText);
        if (colon)
            op = n->field == Field::Name ? Op::Contains : Op::Eq;
        n->op = *op;
        const bool ordering = n->op == Op::Lt || n->op == Op::Le || n->op == Op::Gt || n->op == Op::Ge;
        const bool regex = n->op == Op::Match || n->op == Op::NoMatch;
        const bool textField = n->field == Field::Tag || n->field == Field::State || n->field == Field::NodeName
                || n->field == Field::Queue || n->field == Field::User || n->field == Field::Project
                || n->field == Field::Name || n->field == Field::Step;
        if (textField && ordering)
            return error(opPos,
                    QStringLiteral("'%1' does not apply to %2 (use :, =, != or ~)").arg(opText, fieldName(n->field)));
        if (n->field == Field::Group && (ordering || regex))
            return error(opPos,
                    QStringLiteral("'%1' does not apply to group (use group:ID or group:KIND, = or !=)").arg(opText));
        if ((n->field == Field::Metric || n->field == Field::Id) && regex)
            return error(opPos,
                    QStringLiteral("'%1' does not apply to %2 (compare it with a number)")
                            .arg(opText,
                                    n->field == Field::Metric ? QStringLiteral("metric.") + n->key
                                                              : QStringLiteral("id")));

        auto v = readValue(opText);
        if (!v)
            return nullptr;
        n->value = v->text;
        n->quoted = v->quoted;
        n->number = parseQueryNumber(v->text);

        if ((n->field == Field::Metric || n->field == Field::Id) && !n->number)
            return error(v->pos,
                    QStringLiteral("%1 compares with a number, not '%2'")
                            .arg(n->field == Field::Metric ? QStringLiteral("metric.") + n->key : QStringLiteral("id"),
                                    v->text));
        if (regex) {
            n->re = QRegularExpression(v->text, QRegularExpression::CaseInsensitiveOption);
            if (!n->re.isValid())
                return error(v->pos + (v->quoted ? 1 : 0) + std::max<qsizetype>(0, n->re.patternErrorOffset()),
                        QStringLiteral("invalid regular expression '%1': %2").arg(v->text, n->re.errorString()));
        }
        if (n->field == Field::Group) {
            const auto kind = runGroupKindFromName(v->text.toLower());
            if (!kind && !(n->number && *n->number >= 1 && *n->number == std::floor(*n->number)))
                return error(v->pos,
                        QStringLiteral("group takes a group's id or a kind (sweep, gang, pipeline, attempts), not '%1'")
                                .arg(v->text));
            n->groupKind = kind;
        }
        if (n->field == Field::State && (n->op == Op::Eq || n->op == Op::Ne)) {
            auto states = statesNamed(v->text);
            if (!states)
                return error(v->pos, QStringLiteral("unknown state '%1' (%2)").arg(v->text, knownStateNames()));
            n->states = *states;
        }
        return n;
    }

    QStringView m_s;
    qsizetype m_pos = 0;
    QString m_error;
    bool m_usesLabels = false;
};

// ---- evaluation --------------------------------------------------------------

bool compareNumbers(Op op, double a, double b)
{
    switch (op) {
    case Op::Lt: return a < b;
    case Op::Le: return a <= b;
    case Op::Gt: return a > b;
    case Op::Ge: return a >= b;
    case Op::Eq: return a == b;
    case Op::Ne: return a != b;
    default: return false;
    }
}

bool compareText(Op op, const QString& a, const QString& b)
{
    const int c = QString::compare(a, b, Qt::CaseInsensitive);
    switch (op) {
    case Op::Lt: return c < 0;
    case Op::Le: return c <= 0;
    case Op::Gt: return c > 0;
    case Op::Ge: return c >= 0;
    case Op::Eq: return c == 0;
    case Op::Ne: return c != 0;
    case Op::Contains: return a.contains(b, Qt::CaseInsensitive);
    case Op::Match: return false;
    case Op::NoMatch: return false;
    }
    return false;
}

// A text field (node, queue, name ...) against the node's value.
bool matchText(const Node& n, const QString& value)
{
    if (n.op == Op::Match)
        return n.re.match(value).hasMatch();
    if (n.op == Op::NoMatch)
        return !n.re.match(value).hasMatch();
    return compareText(n.op, value, n.value);
}

struct Evaluator {
    const RunQueryInput& in;
    mutable std::optional<RunSpecLabels> ownLabels;

    const RunSpecLabels& labels() const
    {
        if (in.labels)
            return *in.labels;
        if (!ownLabels)
            ownLabels = specLabelsOf(in.run->specYaml);
        return *ownLabels;
    }

    bool eval(const Node& n) const
    {
        switch (n.kind) {
        case Kind::And: return std::all_of(n.kids.begin(), n.kids.end(), [this](const NodePtr& k) { return eval(*k); });
        case Kind::Or: return std::any_of(n.kids.begin(), n.kids.end(), [this](const NodePtr& k) { return eval(*k); });
        case Kind::Not: return !eval(*n.kids.front());
        case Kind::NameContains: return in.run->name.contains(n.value, Qt::CaseInsensitive);
        case Kind::Has:
            return (in.params && in.params->contains(n.value)) || (in.latest && in.latest->contains(n.value));
        case Kind::Compare: return compare(n);
        }
        return false;
    }

    bool compare(const Node& n) const
    {
        const RunRecord& r = *in.run;
        switch (n.field) {
        case Field::Param: {
            if (!in.params)
                return false;
            auto it = in.params->constFind(n.key);
            if (it == in.params->cend())
                return false;
            if (n.op == Op::Match || n.op == Op::NoMatch)
                return matchText(n, *it);
            if (n.number) {
                if (auto v = parseQueryNumber(*it))
                    return compareNumbers(n.op, *v, *n.number);
            }
            return compareText(n.op, *it, n.value);
        }
        case Field::Metric: {
            if (!in.latest)
                return false;
            auto it = in.latest->constFind(n.key);
            return it != in.latest->cend() && compareNumbers(n.op, it->value, *n.number);
        }
        case Field::Id: return compareNumbers(n.op, double(r.id), *n.number);
        case Field::Tag: {
            if (n.op == Op::Match || n.op == Op::Eq) {
                return std::any_of(r.tags.begin(), r.tags.end(), [&](const QString& t) {
                    return n.op == Op::Match ? n.re.match(t).hasMatch() : t.compare(n.value, Qt::CaseInsensitive) == 0;
                });
            }
            return std::none_of(r.tags.begin(), r.tags.end(), [&](const QString& t) {
                return n.op == Op::NoMatch ? n.re.match(t).hasMatch() : t.compare(n.value, Qt::CaseInsensitive) == 0;
            });
        }
        case Field::State:
            if (n.op == Op::Eq)
                return n.states.contains(r.state);
            if (n.op == Op::Ne)
                return !n.states.contains(r.state);
            return matchText(n, runStateName(r.state));
        case Field::NodeName: return matchText(n, r.node);
        case Field::Name: return matchText(n, r.name);
        case Field::Queue: {
            const QString& q = labels().queue;
            return matchText(n, q.isEmpty() ? QStringLiteral("default") : q);
        }
        case Field::User: return matchText(n, labels().user);
        case Field::Project: return matchText(n, labels().project);
        case Field::Group: {
            const bool member = std::any_of(r.groups.begin(), r.groups.end(), [&](const RunGroupMembership& m) {
                return n.groupKind ? m.kind == *n.groupKind : double(m.group) == *n.number;
            });
            return n.op == Op::Ne ? !member : member;
        }
        case Field::Step: {
            // The step a pipeline's run is of: its instance without the
            // for_each values ("eval[ds=a]" is of step eval).
            const auto m = membershipOf(r, RunGroupKind::Pipeline);
            const QString instance = m ? m->role : QString();
            const qsizetype bracket = instance.indexOf(u'[');
            return matchText(n, bracket > 0 ? instance.left(bracket) : instance);
        }
        }
        return false;
    }
};

QString quoteIfNeeded(const Node& n)
{
    if (!n.quoted)
        return n.value;
    QString v = n.value;
    v.replace(u'\\', QStringLiteral("\\\\")).replace(u'"', QStringLiteral("\\\""));
    return u'"' + v + u'"';
}

void dumpNode(const Node& n, QString& out)
{
    switch (n.kind) {
    case Kind::And:
    case Kind::Or:
    case Kind::Not:
        out += n.kind == Kind::And   ? QStringLiteral("(and")
                : n.kind == Kind::Or ? QStringLiteral("(or")
                                     : QStringLiteral("(not");
        for (const NodePtr& k : n.kids) {
            out += u' ';
            dumpNode(*k, out);
        }
        out += u')';
        return;
    case Kind::NameContains: out += QStringLiteral("(name contains %1)").arg(quoteIfNeeded(n)); return;
    case Kind::Has: out += QStringLiteral("(has %1)").arg(quoteIfNeeded(n)); return;
    case Kind::Compare: {
        QString lhs = fieldName(n.field);
        if (n.field == Field::Param || n.field == Field::Metric)
            lhs += u' ' + n.key;
        out += QStringLiteral("(%1 %2 %3)").arg(lhs, opSymbol(n.op), quoteIfNeeded(n));
        return;
    }
    }
}

} // namespace

// ---- RunQuery ----------------------------------------------------------------

RunQuery::RunQuery() = default;

Result<RunQuery> RunQuery::parse(QStringView text)
{
    Parser p(text);
    auto root = p.run();
    if (!root)
        return fail(root.error().message);
    RunQuery q;
    q.m_root = *root;
    q.m_text = text.toString();
    q.m_usesLabels = p.usesLabels();
    return q;
}

bool RunQuery::matches(const RunQueryInput& in) const
{
    if (!m_root)
        return true;
    Q_ASSERT(in.run);
    if (!in.run)
        return false;
    return Evaluator{in, {}}.eval(*m_root);
}

QString RunQuery::dump() const
{
    if (!m_root)
        return QStringLiteral("(all)");
    QString out;
    dumpNode(*m_root, out);
    return out;
}

// ---- numbers and labels ------------------------------------------------------

std::optional<double> parseQueryNumber(QStringView text)
{
    QStringView t = text.trimmed();
    if (t.startsWith(u'+')) {
        t = t.mid(1);
        if (t.startsWith(u'+') || t.startsWith(u'-'))
            return std::nullopt;
    }
    if (t.isEmpty() || t.size() > 64)
        return std::nullopt;
    char buf[64];
    for (qsizetype i = 0; i < t.size(); ++i) {
        const char16_t c = t.at(i).unicode();
        if (c > 0x7f)
            return std::nullopt;
        buf[i] = char(c);
    }
    double v = 0;
    const auto [end, ec] = std::from_chars(buf, buf + t.size(), v, std::chars_format::general);
    if (ec != std::errc() || end != buf + t.size())
        return std::nullopt;
    return v;
}

RunSpecLabels specLabelsOf(const QString& specYaml)
{
    RunSpecLabels out;
    if (!specYaml.contains(u"queue") && !specYaml.contains(u"user") && !specYaml.contains(u"project"))
        return out;
    try {
        const YAML::Node root = YAML::Load(specYaml.toStdString());
        if (!root.IsMap())
            return out;
        const auto scalar = [&root](const char* key) {
            const YAML::Node v = root[key];
            return v && v.IsScalar() ? QString::fromStdString(v.Scalar()) : QString();
        };
        out.queue = scalar("queue");
        out.user = scalar("user");
        out.project = scalar("project");
    } catch (const YAML::Exception&) {
        return {};
    }
    return out;
}

// ---- grouping ----------------------------------------------------------------

QString RunGroupBy::id() const
{
    switch (kind) {
    case Kind::None: return QStringLiteral("none");
    case Kind::Param: return QStringLiteral("param:") + param;
    case Kind::Tag: return QStringLiteral("tag");
    case Kind::State: return QStringLiteral("state");
    case Kind::Node: return QStringLiteral("node");
    case Kind::Queue: return QStringLiteral("queue");
    case Kind::User: return QStringLiteral("user");
    case Kind::Project: return QStringLiteral("project");
    case Kind::Group: return QStringLiteral("group");
    }
    return {};
}

std::optional<RunGroupBy> RunGroupBy::fromId(QStringView id)
{
    if (id.startsWith(u"param:")) {
        const QStringView name = id.mid(6);
        if (name.isEmpty())
            return std::nullopt;
        return RunGroupBy{Kind::Param, name.toString()};
    }
    for (Kind k : {Kind::None, Kind::Tag, Kind::State, Kind::Node, Kind::Queue, Kind::User, Kind::Project, Kind::Group})
        if (RunGroupBy{k, {}}.id() == id)
            return RunGroupBy{k, {}};
    return std::nullopt;
}

namespace {
// RunGroupBy::Kind::Group (see runGroupKey).
RunGroupKey runGroupOf(const RunRecord& r)
{
    // The widest group first: a gang's rank 1 that is a pipeline's step goes
    // with the pipeline; a pipeline's runs with their pipeline, not its sweep.
    if (const auto m = membershipOf(r, RunGroupKind::Pipeline)) {
        const qsizetype slash = r.name.lastIndexOf(u'/');
        return RunGroupKey{QStringLiteral("pipeline %1 %2").arg(m->group).arg(slash > 0 ? r.name.left(slash) : r.name),
                double(m->group), false};
    }
    if (const auto m = membershipOf(r, RunGroupKind::Sweep)) {
        const qsizetype bracket = r.name.indexOf(u'[');
        return RunGroupKey{QStringLiteral("sweep %1 %2").arg(m->group).arg(bracket > 0 ? r.name.left(bracket) : r.name),
                double(m->group), false};
    }
    if (const auto m = membershipOf(r, RunGroupKind::Attempts)) {
        return RunGroupKey{QStringLiteral("attempts %1 %2").arg(m->group).arg(r.name), double(m->group), false};
    }
    if (const auto m = membershipOf(r, RunGroupKind::Gang)) {
        const qsizetype hash = r.name.lastIndexOf(QStringLiteral("#rank"));
        return RunGroupKey{QStringLiteral("gang %1 %2").arg(m->group).arg(hash > 0 ? r.name.left(hash) : r.name),
                double(m->group), false};
    }
    return RunGroupKey{QStringLiteral("no group"), std::nullopt, true};
}
} // namespace

RunGroupKey runGroupKey(const RunGroupBy& by, const RunQueryInput& in)
{
    const RunRecord& r = *in.run;
    const auto text = [](const QString& value, const QString& what) {
        return value.isEmpty() ? RunGroupKey{QStringLiteral("no ") + what, std::nullopt, true}
                               : RunGroupKey{value, std::nullopt, false};
    };
    switch (by.kind) {
    case RunGroupBy::Kind::None: return {};
    case RunGroupBy::Kind::Param: {
        if (in.params) {
            auto it = in.params->constFind(by.param);
            if (it != in.params->cend())
                return RunGroupKey{*it, parseQueryNumber(*it), false};
        }
        return RunGroupKey{QStringLiteral("no ") + by.param, std::nullopt, true};
    }
    case RunGroupBy::Kind::Tag: {
        QStringList tags = r.tags;
        std::sort(tags.begin(), tags.end(),
                [](const QString& a, const QString& b) { return QString::compare(a, b, Qt::CaseInsensitive) < 0; });
        return text(tags.join(QStringLiteral(", ")), QStringLiteral("tags"));
    }
    case RunGroupBy::Kind::State: return RunGroupKey{runStateName(r.state), double(int(r.state)), false};
    case RunGroupBy::Kind::Node: return text(r.node, QStringLiteral("node"));
    case RunGroupBy::Kind::Queue:
    case RunGroupBy::Kind::User:
    case RunGroupBy::Kind::Project: {
        const RunSpecLabels labels = in.labels ? *in.labels : specLabelsOf(r.specYaml);
        if (by.kind == RunGroupBy::Kind::Queue)
            return RunGroupKey{labels.queue.isEmpty() ? QStringLiteral("default") : labels.queue, std::nullopt, false};
        return by.kind == RunGroupBy::Kind::User ? text(labels.user, QStringLiteral("user"))
                                                 : text(labels.project, QStringLiteral("project"));
    }
    case RunGroupBy::Kind::Group: return runGroupOf(r);
    }
    return {};
}

int compareGroupKeys(const RunGroupKey& a, const RunGroupKey& b)
{
    if (a.missing != b.missing)
        return a.missing ? 1 : -1;
    if (a.missing)
        return 0;
    if (a.number.has_value() != b.number.has_value())
        return a.number ? -1 : 1;
    if (a.number) {
        const double x = *a.number, y = *b.number;
        const bool xn = std::isnan(x), yn = std::isnan(y);
        if (xn || yn) // NaN after every number, one group
            return xn == yn ? 0 : (xn ? 1 : -1);
        return x < y ? -1 : (x > y ? 1 : 0);
    }
    return QString::compare(a.label, b.label, Qt::CaseInsensitive);
}

} // namespace ty
