#pragma once

#include "core/common/Result.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <memory>
#include <optional>

namespace ty::pipeline {

// A pipeline's small boolean language, used by a step's `depends:` when it
// is an expression (`train.succeeded && !lint.failed`) and by `when:`
// (`params.evaluate == true`, `steps.train.outputs.acc >= 0.9`).
//
//   expr    := or
//   or      := and ('||' and)*
//   and     := unary ('&&' unary)*
//   unary   := '!' unary | compare
//   compare := operand (('==' | '!=' | '<' | '<=' | '>' | '>=') operand)?
//   operand := '(' expr ')' | name | 'text' | "text" | number | true | false
//   name    := [A-Za-z_][A-Za-z0-9_.-]*   (a dotted reference, looked up)
//
// Values are strings. `<`, `<=`, `>`, `>=` compare as numbers and need both
// sides to be numbers; `==` and `!=` compare as numbers when both sides are,
// else as text ("1.0" == "1" holds). A value stands for a truth only as
// true/false (also yes/no, 1/0), anything else is an error at evaluation.
// Pure, thread-safe once parsed.
class Condition {
public:
    struct ParseError {
        int offset = 0; // 0-based, in UTF-16 units of the text
        QString message;
    };

    // The condition, or where and why the text is not one.
    static std::expected<Condition, ParseError> parse(const QString& text);

    const QString& text() const { return m_text; }
    // Every name the condition looks up, once each, in order of appearance.
    const QStringList& names() const { return m_names; }

    // `lookup` gives a name's value, or nothing when the name has none (an
    // error naming it). Errors: an unknown name, a non-number compared with
    // `<`, a value used as a truth that is not one.
    Result<bool> evaluate(const std::function<std::optional<QString>(const QString& name)>& lookup) const;

    struct Node;

private:
    QString m_text;
    QStringList m_names;
    std::shared_ptr<const Node> m_root;
};

} // namespace ty::pipeline
