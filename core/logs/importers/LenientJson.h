#pragma once

#include "core/common/Result.h"

#include <QByteArrayView>
#include <QJsonValue>
#include <QList>
#include <QString>

#include <optional>
#include <string_view>

namespace ty {

// JSON (RFC 8259) plus the three tokens Python's json module writes for
// non-finite floats: `NaN`, `Infinity`, `-Infinity` (json.dumps default
// allow_nan=True) -- which QJsonDocument and nlohmann::json both reject, yet
// trainer_state.json and metric JSON lines contain them as soon as a loss
// diverges. Integers without fraction/exponent that fit in qint64 become
// integer QJsonValues (exact steps); other numbers are doubles (overflow gives
// +-inf, underflow +-0.0, as Python's float(): parseDecimal). Duplicate keys: the last wins.
// Nesting deeper than `maxDepth` is an error (bounded recursion).
// Errors name the byte offset (0-based) and what was expected there.
Result<QJsonValue> parseLenientJson(QByteArrayView text, int maxDepth = 64);

// The numbers of a JSON object, nested objects flattened to dotted keys
// ("val.loss"), in the object's (sorted) key order. Strings, booleans, null
// and arrays are not numbers and are left out.
QList<std::pair<QString, double>> flattenJsonNumbers(const QJsonObject& object);

// A decimal number in std::from_chars' general format (no leading '+',
// no nan/inf), rounded correctly at any length (libstdc++'s from_chars,
// fast_float); out of range as Python's float(): a value too large is
// +-inf, one too small (`0.` + 400 zeros + `1`, `1e-400`) is +-0.0.
// nullopt when `text` is not entirely such a number.
std::optional<double> parseDecimal(std::string_view text);

// A number as a metric file writes it: decimal/scientific float syntax
// (parseDecimal, leading '+' allowed, at most 4096 characters) or nan / inf /
// infinity with optional sign, case-insensitive (Python's str(float), csv).
// Leading/trailing ASCII spaces are ignored. nullopt for anything else.
std::optional<double> parseMetricNumber(QByteArrayView text);

} // namespace ty
