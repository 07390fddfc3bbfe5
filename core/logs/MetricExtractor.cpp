#include "MetricExtractor.h"

#include "importers/LenientJson.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QVarLengthArray>

#include <charconv>
#include <functional>
#include <cmath>
#include <limits>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace ty {

namespace {

// Whether the line holds '=' or ':', in one pass: sixteen UTF-16 units a
// step where SSE2 is there (x86-64 always has it), then eight, and the last
// eight again instead of a unit-by-unit tail. Two QStringView::contains()
// calls cost ~420 instructions on a 100-character line (callgrind), a loop
// testing both per character ~800, this ~60.
bool containsEqualsOrColon(QStringView line)
{
    const char16_t* const units = line.utf16();
    const qsizetype n = line.size();
    qsizetype i = 0;
#if defined(__SSE2__)
    if (n >= 8) {
        const __m128i eq = _mm_set1_epi16(short(u'='));
        const __m128i colon = _mm_set1_epi16(short(u':'));
        const auto hits = [&](qsizetype at) {
            const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(units + at));
            return _mm_or_si128(_mm_cmpeq_epi16(x, eq), _mm_cmpeq_epi16(x, colon));
        };
        for (; i + 16 <= n; i += 16)
            if (_mm_movemask_epi8(_mm_or_si128(hits(i), hits(i + 8))) != 0)
                return true;
        if (i + 8 <= n) {
            if (_mm_movemask_epi8(hits(i)) != 0)
                return true;
            i += 8;
        }
        // The last eight units, overlapping what was read: no scalar tail.
        return i < n && _mm_movemask_epi8(hits(n - 8)) != 0;
    }
#endif
    for (; i < n; ++i) {
        if (units[i] == u'=' || units[i] == u':')
            return true;
    }
    return false;
}

// Whether `line` may name a step or epoch in the words scanStepEpochWords
// looks for: each of them holds "tep" (step, global_step), "ter" (iter,
// iteration) or "poc" (epoch), in any ASCII case. Never false for a line
// that holds one; true for some that do not. SSE2: sixteen units narrowed to
// bytes, three overlapping such loads test sixteen positions a step, so the
// common line (no such word) costs about two instructions per unit instead
// of the word scan's per-unit checks.
bool mayNameStepOrEpoch(QStringView line)
{
    const char16_t* const units = line.utf16();
    const qsizetype n = line.size();
#if defined(__SSE2__)
    if (n >= 18) {
        // Units k .. k+15 as bytes, ASCII letters folded to lower case with
        // | 0x20. The narrowing saturates (0x100-0x7fff -> 0xff, 0x8000 and
        // above -> 0): no other unit becomes a byte that folds onto a letter.
        const __m128i fold = _mm_set1_epi8(0x20);
        const auto load = [&](qsizetype k) {
            const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(units + k));
            const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(units + k + 8));
            return _mm_or_si128(_mm_packus_epi16(lo, hi), fold);
        };
        const auto is = [](__m128i x, char c) { return _mm_cmpeq_epi8(x, _mm_set1_epi8(c)); };
        // A trigram starting at any of k .. k+15 (reads units k .. k+17).
        const auto hits = [&](qsizetype k) {
            const __m128i a = load(k), b = load(k + 1), c = load(k + 2);
            const __m128i te = _mm_and_si128(is(a, 't'), is(b, 'e'));
            const __m128i tePR = _mm_and_si128(te, _mm_or_si128(is(c, 'p'), is(c, 'r')));
            const __m128i poc = _mm_and_si128(_mm_and_si128(is(a, 'p'), is(b, 'o')), is(c, 'c'));
            return _mm_movemask_epi8(_mm_or_si128(tePR, poc)) != 0;
        };
        qsizetype k = 0;
        for (; k + 18 <= n; k += 16)
            if (hits(k))
                return true;
        // Trigrams starting at k .. n-3 are left: the last eighteen units,
        // overlapping what was read, no scalar tail.
        return k + 3 <= n && hits(n - 18);
    }
#endif
    const auto folded = [&](qsizetype k) { return char16_t(units[k] | 0x20); };
    for (qsizetype k = 0; k + 3 <= n; ++k) {
        const char16_t a = folded(k), b = folded(k + 1), c = folded(k + 2);
        if ((a == u't' && b == u'e' && (c == u'p' || c == u'r')) || (a == u'p' && b == u'o' && c == u'c'))
            return true;
    }
    return false;
}

bool isKeyStart(QChar c)
{
    const char16_t u = c.unicode();
    return (u >= 'a' && u <= 'z') || (u >= 'A' && u <= 'Z') || u == '_';
}

bool isKeyChar(QChar c)
{
    const char16_t u = c.unicode();
    return isKeyStart(c) || (u >= '0' && u <= '9') || u == '.' || u == '-' || u == '/';
}

bool isDigit(QChar c)
{
    return c.unicode() >= '0' && c.unicode() <= '9';
}

bool isBlank(QChar c)
{
    return c == u' ' || c == u'\t';
}

// Length of a plain number at the start of s (C/Python syntax, `_` digit
// separators, nan/inf words), or 0.
qsizetype numberLength(QStringView s)
{
    qsizetype i = 0;
    const qsizetype n = s.size();
    if (i < n && (s[i] == u'-' || s[i] == u'+'))
        ++i;
    auto word = [&](QLatin1StringView w) {
        return s.mid(i).startsWith(w, Qt::CaseInsensitive)
                && (i + w.size() >= n || !isKeyChar(s[i + w.size()]) || s[i + w.size()] == u'.'
                        || s[i + w.size()] == u'-' || s[i + w.size()] == u'/');
    };
    if (i < n && (s[i] == u'n' || s[i] == u'N' || s[i] == u'i' || s[i] == u'I')) {
        if (word(QLatin1StringView("infinity")))
            return i + 8;
        if (word(QLatin1StringView("inf")) || word(QLatin1StringView("nan")))
            return i + 3;
        return 0;
    }
    const qsizetype start = i;
    bool digits = false;
    while (i < n && (isDigit(s[i]) || (digits && s[i] == u'_' && i + 1 < n && isDigit(s[i + 1])))) {
        digits = true;
        ++i;
    }
    if (i < n && s[i] == u'.' && i + 1 < n && isDigit(s[i + 1])) {
        ++i;
        while (i < n && (isDigit(s[i]) || (s[i] == u'_' && i + 1 < n && isDigit(s[i + 1]))))
            ++i;
        digits = true;
    } else if (digits && i < n && s[i] == u'.' && (i + 1 >= n || !isKeyChar(s[i + 1]))) {
        ++i; // "3." is a float in Python and C
    }
    if (!digits || i == start)
        return 0;
    if (i < n && (s[i] == u'e' || s[i] == u'E')) {
        qsizetype j = i + 1;
        if (j < n && (s[j] == u'-' || s[j] == u'+'))
            ++j;
        if (j < n && isDigit(s[j])) {
            while (j < n && isDigit(s[j]))
                ++j;
            i = j;
        }
    }
    return i;
}

std::optional<double> toDouble(QStringView s)
{
    // Copy to a small ASCII buffer without '_' and '+' (no allocation).
    char buf[80];
    qsizetype len = 0;
    for (QChar c : s) {
        const char16_t u = c.unicode();
        if (u == '_' || u == '+')
            continue;
        if (u > 0x7F || len >= qsizetype(sizeof(buf)))
            return std::nullopt;
        buf[len++] = char(u);
    }
    const bool neg = len > 0 && buf[0] == '-';
    const std::string_view body(buf + (neg ? 1 : 0), size_t(len - (neg ? 1 : 0)));
    auto eqNoCase = [](std::string_view a, std::string_view b) {
        if (a.size() != b.size())
            return false;
        for (size_t i = 0; i < a.size(); ++i) {
            if ((a[i] | 0x20) != b[i])
                return false;
        }
        return true;
    };
    if (eqNoCase(body, "nan"))
        return std::numeric_limits<double>::quiet_NaN();
    if (eqNoCase(body, "inf") || eqNoCase(body, "infinity"))
        return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    double v = 0;
    const char* b = buf;
    const char* e = buf + len;
    if (len > 0 && buf[len - 1] == '.')
        --e;
    const auto [ptr, ec] = std::from_chars(b, e, v);
    if (ec == std::errc::result_out_of_range)
        return parseDecimal(std::string_view(b, size_t(e - b))); // +-inf or +-0, as Python's float()
    if (ec != std::errc() || ptr != e)
        return std::nullopt;
    return v;
}

// A value token at the start of s: plain number, tensor(...), np.float32(...).
// Returns its parsed value and length.
struct ValueToken {
    double value;
    qsizetype length;
};

std::optional<ValueToken> valueToken(QStringView s)
{
    static constexpr QLatin1StringView kWrappers[] = {
            QLatin1StringView("tensor("),
            QLatin1StringView("np.float64("),
            QLatin1StringView("np.float32("),
            QLatin1StringView("np.float16("),
            QLatin1StringView("np.float_("),
            QLatin1StringView("numpy.float64("),
            QLatin1StringView("numpy.float32("),
            QLatin1StringView("np.int64("),
            QLatin1StringView("np.int32("),
            QLatin1StringView("float("),
    };
    // Every wrapper starts with 't', 'n' or 'f': most values skip the list.
    const char16_t first = s.isEmpty() ? u'\0' : s.front().unicode();
    const bool maybeWrapped = first == u't' || first == u'n' || first == u'f';
    for (QLatin1StringView w : kWrappers) {
        if (!maybeWrapped)
            break;
        if (!s.startsWith(w))
            continue;
        qsizetype i = w.size();
        while (i < s.size() && isBlank(s[i]))
            ++i;
        const qsizetype len = numberLength(s.mid(i));
        if (len == 0)
            return std::nullopt;
        const auto v = toDouble(s.mid(i, len));
        if (!v)
            return std::nullopt;
        // Skip to the closing parenthesis (tensor(0.5, device='cuda:0', grad_fn=...)).
        int depth = 1;
        qsizetype j = i + len;
        for (; j < s.size() && depth > 0; ++j) {
            if (s[j] == u'(')
                ++depth;
            else if (s[j] == u')')
                --depth;
        }
        if (depth != 0)
            return std::nullopt;
        return ValueToken{*v, j};
    }
    const qsizetype len = numberLength(s);
    if (len == 0)
        return std::nullopt;
    const auto v = toDouble(s.left(len));
    if (!v)
        return std::nullopt;
    return ValueToken{*v, len};
}

bool isStepKey(QStringView key)
{
    return key.compare(u"step", Qt::CaseInsensitive) == 0 || key.compare(u"global_step", Qt::CaseInsensitive) == 0
            || key.compare(u"iteration", Qt::CaseInsensitive) == 0 || key.compare(u"iter", Qt::CaseInsensitive) == 0
            || key.endsWith(u"/global_step", Qt::CaseInsensitive) || key.endsWith(u"/step", Qt::CaseInsensitive);
}

bool isEpochKey(QStringView key)
{
    return key.compare(u"epoch", Qt::CaseInsensitive) == 0 || key.endsWith(u"/epoch", Qt::CaseInsensitive);
}

// Does s (after blanks) start with `key=` / `key:` followed by a value?
bool startsPair(QStringView s)
{
    qsizetype i = 0;
    if (i >= s.size() || !isKeyStart(s[i]))
        return false;
    while (i < s.size() && isKeyChar(s[i]))
        ++i;
    while (i < s.size() && isBlank(s[i]))
        ++i;
    return i < s.size() && (s[i] == u'=' || s[i] == u':');
}

// A nested object under one of these names holds hyperparameters or
// settings (`{"params": {"lr": 0.001}}`, `{"hparams": ...}`), not metrics.
bool isConfigKey(QStringView key)
{
    static constexpr std::u16string_view kConfig[] = {
            u"params",
            u"hparams",
            u"hyperparameters",
            u"hyper_parameters",
            u"config",
            u"cfg",
            u"args",
            u"arguments",
            u"options",
            u"opts",
            u"settings",
    };
    for (std::u16string_view c : kConfig)
        if (key.compare(QStringView(c.data(), qsizetype(c.size())), Qt::CaseInsensitive) == 0)
            return true;
    return false;
}

} // namespace

QString MetricExtractor::rankKey(const QString& key, int rank)
{
    return key + QStringLiteral("[rank") + QString::number(rank) + u']';
}

std::optional<std::pair<QString, int>> MetricExtractor::splitRankKey(const QString& key)
{
    if (!key.endsWith(u']'))
        return std::nullopt;
    const qsizetype open = key.lastIndexOf(QStringLiteral("[rank"));
    if (open <= 0)
        return std::nullopt;
    bool ok = false;
    const int rank = QStringView(key).sliced(open + 5, key.size() - open - 6).toInt(&ok);
    if (!ok || rank < 0 || !isDigit(key[open + 5]))
        return std::nullopt;
    return std::pair<QString, int>{key.left(open), rank};
}

MetricExtractor::MetricExtractor(QList<MetricRule> customRules)
    : m_rules(std::move(customRules))
{ }

std::optional<double> MetricExtractor::parseValue(QStringView text)
{
    text = text.trimmed();
    if (text.endsWith(u'%'))
        text.chop(1);
    const auto tok = valueToken(text);
    if (!tok || tok->length != text.size())
        return std::nullopt;
    return tok->value;
}

bool MetricExtractor::isNoiseKey(QStringView key)
{
    // Bookkeeping names that look like key/value pairs but are not metrics.
    static constexpr std::string_view kNoise[] = {
            "version",
            "v_num",
            "pid",
            "ppid",
            "port",
            "rank",
            "local_rank",
            "global_rank",
            "node_rank",
            "world_size",
            "seed",
            "num_workers",
            "workers",
            "cuda_visible_devices",
            "line",
            "lineno",
            "python",
            "torch",
            "cuda",
            "cudnn",
            "driver",
            "gpu",
            "device",
            "devices",
            "exit",
            "code",
            "returncode",
            "exit_code",
            "errno",
            "pytorch",
            "lightning",
            "numpy",
            "transformers",
            "tensorflow",
            "keras",
            "jax",
            "build",
            "release",
            "date",
            "time",
            "timestamp",
            "eta",
            "elapsed",
            "remaining",
    };
    // Source and data file names (`utils.py:21`).
    static constexpr std::string_view kFileExt[] = {
            "py",
            "pyx",
            "c",
            "cc",
            "cpp",
            "cxx",
            "h",
            "hpp",
            "cu",
            "rs",
            "go",
            "java",
            "js",
            "ts",
            "sh",
            "lua",
            "jl",
            "rb",
            "so",
            "yaml",
            "yml",
            "json",
            "txt",
            "log",
            "ipynb",
    };
    char buf[64];
    if (key.size() > qsizetype(sizeof(buf)))
        return true;
    for (qsizetype i = 0; i < key.size(); ++i) {
        const char16_t u = key[i].unicode();
        buf[i] = char(u >= 'A' && u <= 'Z' ? u + 32 : u);
    }
    const std::string_view k(buf, size_t(key.size()));
    for (std::string_view n : kNoise) {
        if (k == n)
            return true;
    }
    if (k.ends_with("_version") || k.ends_with(".version"))
        return true;
    const size_t dot = k.rfind('.');
    if (dot != std::string_view::npos) {
        const std::string_view ext = k.substr(dot + 1);
        for (std::string_view e : kFileExt) {
            if (ext == e)
                return true;
        }
    }
    return false;
}

void MetricExtractor::accept(const QString& key, double value, bool percent, QList<Raw>& out, LineInfo& info)
{
    if (key.isEmpty() || key.size() > 64)
        return;
    if (isStepKey(key)) {
        if (std::isfinite(value) && value >= 0 && value == std::floor(value) && value < 9.0e18)
            info.step = qint64(value);
        return;
    }
    if (isEpochKey(key)) {
        if (std::isfinite(value))
            info.epoch = value;
        return;
    }
    if (isNoiseKey(key))
        return;
    out.append(Raw{key, value, percent});
}

bool MetricExtractor::extractObject(QStringView line, QList<Raw>& out, LineInfo& info) const
{
    const QStringView trimmed = line.trimmed();
    if (!trimmed.endsWith(u'}'))
        return false;
    // The object starts at the first `{"` or `{'` (a tqdm bar may precede it).
    qsizetype start = -1;
    for (qsizetype i = 0; i + 1 < trimmed.size(); ++i) {
        if (trimmed[i] != u'{')
            continue;
        qsizetype j = i + 1;
        while (j < trimmed.size() && isBlank(trimmed[j]))
            ++j;
        if (j < trimmed.size() && (trimmed[j] == u'"' || trimmed[j] == u'\'')) {
            start = i;
            break;
        }
    }
    if (start < 0)
        return false;
    const QStringView obj = trimmed.mid(start);

    // JSON first (strict), flattening nested objects to dotted keys.
    QJsonParseError err{};
    const QJsonDocument doc = QJsonDocument::fromJson(obj.toUtf8(), &err);
    if (err.error == QJsonParseError::NoError && doc.isObject()) {
        const std::function<void(const QJsonObject&, const QString&)> walk
                = [&](const QJsonObject& o, const QString& prefix) {
                      for (auto it = o.begin(); it != o.end(); ++it) {
                          const QString key = prefix.isEmpty() ? it.key() : prefix + u'.' + it.key();
                          const QJsonValue v = it.value();
                          if (v.isDouble()) {
                              accept(key, v.toDouble(), false, out, info);
                          } else if (v.isString()) {
                              const QString s = v.toString();
                              const bool pct = s.trimmed().endsWith(u'%');
                              if (const auto d = parseValue(s))
                                  accept(key, *d, pct, out, info);
                          } else if (v.isObject() && prefix.count(u'.') < 4 && !isConfigKey(it.key())) {
                              walk(v.toObject(), key);
                          }
                      }
                  };
        walk(doc.object(), QString());
        return true;
    }

    // Python dict repr (or JSON with NaN/Infinity): 'key': value pairs.
    static const QRegularExpression pairRe(QStringLiteral(R"((['"])([^'"]{1,64})\1\s*:\s*('[^']*'|"[^"]*"|[^,{}]+))"));
    bool any = false;
    auto it = pairRe.globalMatch(obj);
    while (it.hasNext()) {
        const QRegularExpressionMatch m = it.next();
        QStringView v = m.capturedView(3).trimmed();
        if (v.size() >= 2 && (v.front() == u'\'' || v.front() == u'"'))
            v = v.mid(1, v.size() - 2);
        const bool pct = v.trimmed().endsWith(u'%');
        const auto d = parseValue(v);
        any = true;
        if (d)
            accept(m.captured(2), *d, pct, out, info);
    }
    return any;
}

void MetricExtractor::scanStepEpochWords(QStringView line, LineInfo& info) const
{
    // `step 10`, `Step 3/100`, `Epoch 3/15`, `epoch 0 done`, `Iter [50/1000]`,
    // `iteration: 7`: WORD \s*[=:]?\s*\[?\s*NUMBER (\s*/\s*INT\s*\]?)? and
    // then no word character, `.` or `%`. Hand-written: this runs on every
    // metric line.
    static constexpr std::string_view kWords[] = {"global_step", "iteration", "iter", "step", "epoch"};
    if (!mayNameStepOrEpoch(line))
        return; // most lines: none of the words (the scan below reads every unit)
    const qsizetype n = line.size();
    auto lower = [&](qsizetype i) { return char(line[i].unicode() < 0x80 ? (line[i].unicode() | 0x20) : 0); };
    auto wordChar = [&](qsizetype i) { return isKeyChar(line[i]) && line[i] != u'-' && line[i] != u'/'; };
    for (qsizetype i = 0; i < n; ++i) {
        const char c = lower(i);
        if (c != 'g' && c != 'i' && c != 's' && c != 'e')
            continue;
        if (i > 0 && wordChar(i - 1))
            continue;
        for (std::string_view w : kWords) {
            if (w[0] != c || i + qsizetype(w.size()) > n)
                continue;
            bool eq = true;
            for (size_t k = 1; k < w.size() && eq; ++k)
                eq = lower(i + qsizetype(k)) == w[k];
            if (!eq)
                continue;
            qsizetype j = i + qsizetype(w.size());
            auto skipBlanks = [&] {
                while (j < n && isBlank(line[j]))
                    ++j;
            };
            skipBlanks();
            if (j < n && (line[j] == u'=' || line[j] == u':'))
                ++j;
            skipBlanks();
            if (j < n && line[j] == u'[')
                ++j;
            skipBlanks();
            const qsizetype numStart = j;
            while (j < n && isDigit(line[j]))
                ++j;
            if (j == numStart)
                break;
            qsizetype numEnd = j;
            if (j + 1 < n && line[j] == u'.' && isDigit(line[j + 1])) {
                ++j;
                while (j < n && isDigit(line[j]))
                    ++j;
                numEnd = j;
            }
            // optional "/ total ]"
            qsizetype k = j;
            while (k < n && isBlank(line[k]))
                ++k;
            if (k < n && line[k] == u'/') {
                ++k;
                while (k < n && isBlank(line[k]))
                    ++k;
                const qsizetype totStart = k;
                while (k < n && isDigit(line[k]))
                    ++k;
                if (k > totStart) {
                    j = k;
                    while (j < n && isBlank(line[j]))
                        ++j;
                    if (j < n && line[j] == u']')
                        ++j;
                    else
                        j = k;
                }
            }
            if (j < n && (wordChar(j) || line[j] == u'%'))
                break;
            const auto value = toDouble(line.mid(numStart, numEnd - numStart));
            if (!value)
                break;
            if (w == "epoch") {
                if (!info.epoch)
                    info.epoch = *value;
            } else if (!info.step && *value == std::floor(*value)) {
                info.step = qint64(*value);
            }
            i = j - 1;
            break;
        }
    }
}

void MetricExtractor::extractPairs(QStringView line, QList<Raw>& out, LineInfo& info) const
{
    const qsizetype n = line.size();
    qsizetype i = 0;
    while (i < n) {
        // Find a separator, then walk back over the key.
        const QChar c = line[i];
        if (c != u'=' && c != u':') {
            ++i;
            continue;
        }
        const qsizetype sep = i;
        ++i;
        qsizetype keyEnd = sep;
        while (keyEnd > 0 && isBlank(line[keyEnd - 1]))
            --keyEnd;
        qsizetype keyStart = keyEnd;
        while (keyStart > 0 && isKeyChar(line[keyStart - 1]))
            --keyStart;
        // the key must start with a letter or '_' (skip leading digits/dots of a longer token: reject instead)
        if (keyStart == keyEnd || !isKeyStart(line[keyStart]))
            continue;
        if (c == u'=' && sep + 1 < n && line[sep + 1] == u'=')
            continue; // `==` (version pins, comparisons)
        const QStringView key = line.mid(keyStart, keyEnd - keyStart);
        if (key.size() > 64 || key.endsWith(u'.') || key.endsWith(u'-') || key.endsWith(u'/'))
            continue;
        if (c == u':') {
            // `key: value` must not end a phrase: look at what precedes the key.
            qsizetype p = keyStart;
            while (p > 0 && isBlank(line[p - 1]))
                --p;
            if (p > 0) {
                const QChar before = line[p - 1];
                const bool sepBefore = QStringView(u"-,;|[({:>").contains(before);
                const bool numberBefore = isDigit(before) || before == u'%';
                // `final val_accuracy: 0.95`: a key written as an identifier
                // (`_`, `.` or `/` inside) is a name from code, not the end
                // of a phrase like `Modules in train mode: 4`.
                const bool identifier = key.contains(u'_') || key.contains(u'.') || key.contains(u'/');
                if (!sepBefore && !numberBefore && !(identifier && p < keyStart))
                    continue;
                if (p == keyStart && !sepBefore)
                    continue; // glued to something else
            }
        }
        qsizetype v = sep + 1;
        while (v < n && isBlank(line[v]))
            ++v;
        const auto tok = valueToken(line.mid(v));
        if (!tok)
            continue;
        qsizetype end = v + tok->length;
        bool percent = false;
        if (end < n && line[end] == u'%') {
            percent = true;
            ++end;
        }
        // What follows the value decides whether it is a value or part of
        // something else (units, rates, fractions, times, versions).
        qsizetype f = end;
        while (f < n && isBlank(line[f]))
            ++f;
        bool ok = false;
        if (f >= n) {
            ok = true;
        } else {
            const QChar next = line[f];
            if (QStringView(u",;)]}").contains(next))
                ok = true;
            else if (next == u'|')
                ok = !percent; // `45%|` is a progress bar's own percentage
            else if (f > end && next == u'-' && (f + 1 >= n || isBlank(line[f + 1])))
                ok = true; // Keras ` - `
            else if (f > end && startsPair(line.mid(f)))
                ok = true;
            else if (f > end && next == u'(' && line[sep] == u'=')
                ok = true; // `loss=0.6 (12.3 it/s)`, `loss=0.5 (best)`: a remark after the pair
        }
        if (!ok) {
            i = end;
            continue;
        }
        accept(key.toString(), tok->value, percent, out, info);
        i = end;
    }
}

std::optional<MetricExtractor::RankMarker> MetricExtractor::rankMarkerAt(QStringView line, qsizetype at)
{
    // `[rank 1]`, `[rank1]:`, `[rank 1]:` (torch 2.x, launchers, scripts) and
    // torchrun's `[default0]:` (`[<role><local rank>]:`, role "default").
    const qsizetype n = line.size();
    qsizetype i = at + 1;
    bool needColon = false;
    if (line.mid(i).startsWith(u"rank")) {
        i += 4;
        if (i < n && line[i] == u' ')
            ++i;
    } else if (line.mid(i).startsWith(u"default")) {
        i += 7;
        needColon = true;
    } else {
        return std::nullopt;
    }
    const qsizetype digits = i;
    int rank = 0;
    while (i < n && isDigit(line[i]) && i - digits < 6)
        rank = rank * 10 + (line[i++].unicode() - '0');
    if (i == digits || i >= n || line[i] != u']')
        return std::nullopt;
    ++i;
    if (i < n && line[i] == u':')
        ++i;
    else if (needColon)
        return std::nullopt;
    return RankMarker{rank, i - at};
}

void MetricExtractor::extractWords(QStringView line, QList<Raw>& out, LineInfo& info) const
{
    // `step 10 loss 0.1160`, `Epoch 3 | train loss 0.52 | val acc 0.81`:
    // one or two words, then a number with a fraction or exponent. Only on a
    // line that names a step or epoch in words (info), so prose stays prose.
    struct Token {
        QStringView text;
        bool separator;
    };
    QVarLengthArray<Token, 32> tokens;
    const qsizetype n = line.size();
    for (qsizetype i = 0; i < n;) {
        while (i < n && isBlank(line[i]))
            ++i;
        if (i >= n)
            break;
        const qsizetype start = i;
        while (i < n && !isBlank(line[i]))
            ++i;
        QStringView t = line.mid(start, i - start);
        bool sepAfter = false;
        if (t.size() > 1 && (t.back() == u',' || t.back() == u';' || t.back() == u'|')) {
            t.chop(1);
            sepAfter = true;
        }
        if (t.size() == 1 && QStringView(u"|-,;").contains(t.front()))
            tokens.append(Token{t, true});
        else
            tokens.append(Token{t, false});
        if (sepAfter)
            tokens.append(Token{QStringView(), true});
    }
    auto isWord = [](QStringView t) {
        if (t.isEmpty() || t.size() > 64 || !isKeyStart(t.front()))
            return false;
        for (QChar c : t)
            if (!isKeyChar(c))
                return false;
        return !(t.back() == u'.' || t.back() == u'-' || t.back() == u'/');
    };
    // A number with a fraction or an exponent (an integer is a count, an
    // index or prose: `epoch 3 of 10`, `rank 0`, `ckpt 3`).
    auto fractional = [](QStringView t, double& value, bool& percent) {
        percent = t.endsWith(u'%');
        if (percent)
            t.chop(1);
        const qsizetype len = numberLength(t);
        if (len == 0 || len != t.size())
            return false;
        const auto v = toDouble(t);
        if (!v)
            return false;
        value = *v;
        for (QChar c : t)
            if (c == u'.' || c == u'e' || c == u'E' || isKeyStart(c))
                return true;
        return false;
    };
    const qsizetype count = tokens.size();
    qsizetype wordsFrom = -1; // first word token of the pending key
    for (qsizetype k = 0; k < count; ++k) {
        const Token& t = tokens[k];
        if (t.separator) {
            wordsFrom = -1;
            continue;
        }
        if (isWord(t.text) && !(t.text.size() <= 8 && numberLength(t.text) == t.text.size())) {
            if (wordsFrom < 0)
                wordsFrom = k;
            continue;
        }
        double value = 0;
        bool percent = false;
        const qsizetype words = wordsFrom < 0 ? 0 : k - wordsFrom;
        const qsizetype from = wordsFrom;
        wordsFrom = -1;
        if (words < 1 || words > 2 || !fractional(t.text, value, percent))
            continue;
        // What follows: end, a separator, or the next `word [word] number`.
        bool ok = k + 1 >= count || tokens[k + 1].separator;
        if (!ok) {
            qsizetype j = k + 1;
            while (j < count && j - k <= 2 && !tokens[j].separator && isWord(tokens[j].text))
                ++j;
            ok = j > k + 1 && j < count && !tokens[j].separator && numberLength(tokens[j].text) > 0;
        }
        if (!ok)
            continue;
        QString key = tokens[from].text.toString();
        if (words == 2)
            key += u'_' + tokens[from + 1].text;
        if (isStepKey(key) || isEpochKey(key))
            continue; // the line's own step/epoch words (`step 0.5` is not a step)
        accept(key, value, percent, out, info);
    }
}

void MetricExtractor::setLastStep(const QString& key, qint64 step)
{
    if (auto it = m_keys.find(key); it != m_keys.end())
        it->lastStep = step;
    else
        internKey(key, step);
}

QHash<QString, MetricExtractor::KeyState>::iterator MetricExtractor::internKey(const QString& key, qint64 step)
{
    if (m_nextHandle == 0) // wrapped after 2^32 - 1 keys: handles are hints, 0 is "none"
        ++m_nextHandle;
    return m_keys.insert(key, KeyState{step, m_nextHandle++});
}

QList<ExtractedMetric> MetricExtractor::extract(QStringView line)
{
    // A line with no '=' or ':', no step or epoch word and no custom rule to
    // try gives nothing in any of its rank parts (extractPart returns before
    // it changes anything): most console lines. Decided in two SSE2 passes,
    // before the search for rank prefixes.
    if (m_rules.isEmpty() && !containsEqualsOrColon(line) && !mayNameStepOrEpoch(line))
        return {};
    // Per-rank prefixes: each rank's part of the line is read on its own,
    // also where two ranks' writes ended up on one line.
    qsizetype bracket = line.indexOf(u'[');
    std::optional<RankMarker> first;
    while (bracket >= 0 && !(first = rankMarkerAt(line, bracket)))
        bracket = line.indexOf(u'[', bracket + 1);
    if (!first)
        return extractPart(line, -1);
    QList<ExtractedMetric> result;
    if (bracket > 0)
        result += extractPart(line.left(bracket), -1);
    qsizetype at = bracket;
    RankMarker marker = *first;
    for (;;) {
        const qsizetype body = at + marker.length;
        qsizetype next = line.indexOf(u'[', body);
        std::optional<RankMarker> following;
        while (next >= 0 && !(following = rankMarkerAt(line, next)))
            next = line.indexOf(u'[', next + 1);
        result += extractPart(line.mid(body, (following ? next : line.size()) - body), marker.rank);
        if (!following)
            break;
        at = next;
        marker = *following;
    }
    return result;
}

QList<ExtractedMetric> MetricExtractor::extractPart(QStringView line, int rank)
{
    QList<ExtractedMetric> result;
    const bool hasSep = containsEqualsOrColon(line);

    QList<Raw> raws;
    LineInfo info;
    bool object = false;
    if (hasSep) {
        object = extractObject(line, raws, info);
        if (!object) {
            extractPairs(line, raws, info);
            if (!raws.isEmpty())
                scanStepEpochWords(line, info);
        }
    }
    // The whitespace form only where nothing else was found and the line
    // names a step or epoch in words; else, without custom rules, done.
    if (!object && raws.isEmpty() && !info.step && !info.epoch) {
        scanStepEpochWords(line, info);
        if (info.step || info.epoch)
            extractWords(line, raws, info);
        else if (m_rules.isEmpty())
            return result;
    }
    for (const MetricRule& rule : m_rules) {
        auto it = rule.regex.globalMatch(line);
        while (it.hasNext()) {
            const QRegularExpressionMatch m = it.next();
            const auto v = parseValue(m.capturedView(u"value"));
            if (!v)
                continue;
            QString key = m.captured(u"key");
            if (key.isEmpty())
                key = rule.key;
            if (key.isEmpty())
                continue;
            bool okStep = false;
            const qint64 step = m.capturedView(u"step").toLongLong(&okStep);
            if (okStep)
                info.step = step;
            raws.removeIf([&](const Raw& r) { return r.key == key; });
            raws.append(Raw{key, *v, m.capturedView(u"value").trimmed().endsWith(u'%')});
        }
    }
    // The console's step axis (one per rank): the last step any line named.
    // A sample without its own step is placed there, so every key of one
    // console shares one axis (a bar's `loss=` beside `step=45 train_loss=`).
    std::optional<qint64>& consoleStep = rank < 0 ? m_consoleStep : m_rankStep[rank];
    if (info.step)
        consoleStep = info.step;
    const std::optional<qint64> stepNow = consoleStep;
    result.reserve(raws.size());
    for (const Raw& r : raws) {
        ExtractedMetric m;
        m.key = rank < 0 ? r.key : rankKey(r.key, rank);
        m.value = r.value;
        m.percent = r.percent;
        m.epoch = info.epoch;
        auto last = m_keys.find(m.key);
        if (info.step) {
            m.step = *info.step;
            m.stepFromLine = true;
        } else if (stepNow) {
            m.step = *stepNow;
        } else {
            m.step = last == m_keys.end() ? 0 : last->lastStep + 1;
        }
        if (last == m_keys.end())
            last = internKey(m.key, m.step);
        else
            last->lastStep = m.step;
        // The table's copy of the key and its handle: one QString and one
        // number per series for every point, so the store's writer finds
        // its key id without hashing the text (MetricPoint::keyHandle).
        m.key = last.key();
        m.keyHandle = last->handle;
        result.append(std::move(m));
    }
    return result;
}

} // namespace ty
