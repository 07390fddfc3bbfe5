#include "TfEventDecoder.h"

#include <QLocale>
#include <QtEndian>

#include <cstring>

namespace ty {

namespace {

enum WireType : int { Varint = 0, Fixed64 = 1, Len = 2, Fixed32 = 5 };

// A cursor over one message's bytes. `base` is the message's offset inside the
// event, for error messages.
struct Cursor {
    const unsigned char* p;
    const unsigned char* end;
    const unsigned char* start;
    qint64 base;
    QString* error;

    qint64 pos() const { return base + (p - start); }
    bool atEnd() const { return p >= end; }

    bool bad(const QString& what)
    {
        if (error->isEmpty())
            *error = QStringLiteral("%1 at byte %2 of the event").arg(what).arg(pos());
        p = end;
        return false;
    }

    bool varint(quint64& out)
    {
        quint64 r = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (p >= end)
                return bad(QStringLiteral("truncated varint"));
            const unsigned char c = *p++;
            if (shift == 63 && c > 1)
                return bad(QStringLiteral("varint overflows 64 bits"));
            r |= quint64(c & 0x7Fu) << shift;
            if (c < 0x80) {
                out = r;
                return true;
            }
        }
        return bad(QStringLiteral("varint longer than 10 bytes"));
    }

    bool tag(int& field, int& wire)
    {
        quint64 k = 0;
        if (!varint(k))
            return false;
        if ((k >> 3) == 0 || (k >> 3) > 0x1FFFFFFF)
            return bad(QStringLiteral("invalid field number %1").arg(k >> 3));
        field = int(k >> 3);
        wire = int(k & 7);
        return true;
    }

    bool fixed64(quint64& out)
    {
        if (end - p < 8)
            return bad(QStringLiteral("truncated fixed64"));
        out = qFromLittleEndian<quint64>(p);
        p += 8;
        return true;
    }

    bool fixed32(quint32& out)
    {
        if (end - p < 4)
            return bad(QStringLiteral("truncated fixed32"));
        out = qFromLittleEndian<quint32>(p);
        p += 4;
        return true;
    }

    bool bytes(Cursor& sub)
    {
        quint64 n = 0;
        if (!varint(n))
            return false;
        if (n > quint64(end - p))
            return bad(QStringLiteral("length %1 runs past the end of the message").arg(n));
        sub = Cursor{p, p + n, p, pos(), error};
        p += n;
        return true;
    }

    bool skip(int wire)
    {
        quint64 v = 0;
        quint32 w = 0;
        Cursor sub{};
        switch (wire) {
        case Varint: return varint(v);
        case Fixed64: return fixed64(v);
        case Fixed32: return fixed32(w);
        case Len: return bytes(sub);
        default: return bad(QStringLiteral("unsupported wire type %1").arg(wire));
        }
    }

    QString string() const { return QString::fromUtf8(reinterpret_cast<const char*>(p), end - p); }
    QByteArrayView view() const { return QByteArrayView(reinterpret_cast<const char*>(p), end - p); }
};

double asDouble(quint64 bits)
{
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
}

float asFloat(quint32 bits)
{
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

constexpr quint64 kDtFloat = 1;
constexpr quint64 kDtDouble = 2;

// TensorProto -> its single element, if it is a one-element float/double tensor.
std::optional<double> tensorScalar(Cursor c)
{
    quint64 dtype = 0;
    quint64 elements = 1;
    bool shapeSeen = false;
    QByteArrayView content;
    bool haveContent = false;
    QList<double> vals; // float_val or double_val, in order
    while (!c.atEnd()) {
        int field = 0, wire = 0;
        if (!c.tag(field, wire))
            return std::nullopt;
        if (field == 1 && wire == Varint) {
            if (!c.varint(dtype))
                return std::nullopt;
        } else if (field == 2 && wire == Len) {
            Cursor shape{};
            if (!c.bytes(shape))
                return std::nullopt;
            shapeSeen = true;
            while (!shape.atEnd()) {
                int f2 = 0, w2 = 0;
                if (!shape.tag(f2, w2))
                    return std::nullopt;
                if (f2 == 2 && w2 == Len) {
                    Cursor dim{};
                    if (!shape.bytes(dim))
                        return std::nullopt;
                    quint64 size = 1;
                    bool sizeSeen = false;
                    while (!dim.atEnd()) {
                        int f3 = 0, w3 = 0;
                        if (!dim.tag(f3, w3))
                            return std::nullopt;
                        if (f3 == 1 && w3 == Varint) {
                            if (!dim.varint(size))
                                return std::nullopt;
                            sizeSeen = true;
                        } else if (!dim.skip(w3)) {
                            return std::nullopt;
                        }
                    }
                    if (!sizeSeen)
                        size = 0;                                    // proto3 default
                    elements = (size == 1 && elements == 1) ? 1 : 2; // only "exactly one" matters
                } else if (!shape.skip(w2)) {
                    return std::nullopt;
                }
            }
        } else if (field == 4 && wire == Len) {
            Cursor b{};
            if (!c.bytes(b))
                return std::nullopt;
            content = b.view();
            haveContent = true;
        } else if (field == 5 && wire == Fixed32) {
            quint32 w = 0;
            if (!c.fixed32(w))
                return std::nullopt;
            vals.append(double(asFloat(w)));
        } else if (field == 5 && wire == Len) {
            Cursor b{};
            if (!c.bytes(b))
                return std::nullopt;
            while (!b.atEnd()) {
                quint32 w = 0;
                if (!b.fixed32(w))
                    return std::nullopt;
                vals.append(double(asFloat(w)));
            }
        } else if (field == 6 && wire == Fixed64) {
            quint64 w = 0;
            if (!c.fixed64(w))
                return std::nullopt;
            vals.append(asDouble(w));
        } else if (field == 6 && wire == Len) {
            Cursor b{};
            if (!c.bytes(b))
                return std::nullopt;
            while (!b.atEnd()) {
                quint64 w = 0;
                if (!b.fixed64(w))
                    return std::nullopt;
                vals.append(asDouble(w));
            }
        } else if (!c.skip(wire)) {
            return std::nullopt;
        }
    }
    Q_UNUSED(shapeSeen);
    if (elements != 1)
        return std::nullopt;
    if (dtype == kDtFloat) {
        if (haveContent)
            return content.size() == 4
                    ? std::optional<double>(double(asFloat(qFromLittleEndian<quint32>(content.data()))))
                    : std::nullopt;
        return vals.size() == 1 ? std::optional<double>(vals.first()) : std::nullopt;
    }
    if (dtype == kDtDouble) {
        if (haveContent)
            return content.size() == 8 ? std::optional<double>(asDouble(qFromLittleEndian<quint64>(content.data())))
                                       : std::nullopt;
        return vals.size() == 1 ? std::optional<double>(vals.first()) : std::nullopt;
    }
    return std::nullopt;
}

// SummaryMetadata -> plugin_data.plugin_name, plugin_data.content
QString pluginName(Cursor c, QByteArrayView* content = nullptr)
{
    QString name;
    while (!c.atEnd()) {
        int field = 0, wire = 0;
        if (!c.tag(field, wire))
            return name;
        if (field == 1 && wire == Len) {
            Cursor pd{};
            if (!c.bytes(pd))
                return name;
            while (!pd.atEnd()) {
                int f2 = 0, w2 = 0;
                if (!pd.tag(f2, w2))
                    return name;
                if (f2 == 1 && w2 == Len) {
                    Cursor s{};
                    if (!pd.bytes(s))
                        return name;
                    name = s.string();
                } else if (f2 == 2 && w2 == Len && content) {
                    Cursor s{};
                    if (!pd.bytes(s))
                        return name;
                    *content = QByteArrayView(s.p, s.end - s.p);
                } else if (!pd.skip(w2)) {
                    return name;
                }
            }
        } else if (!c.skip(wire)) {
            return name;
        }
    }
    return name;
}

// google.protobuf.Value -> text (number, string, bool); nullopt for the rest.
std::optional<QString> protobufValueText(Cursor c)
{
    std::optional<QString> text;
    while (!c.atEnd()) {
        int field = 0, wire = 0;
        if (!c.tag(field, wire))
            return std::nullopt;
        if (field == 2 && wire == Fixed64) {
            quint64 w = 0;
            if (!c.fixed64(w))
                return std::nullopt;
            text = QString::number(asDouble(w), 'g', QLocale::FloatingPointShortest);
        } else if (field == 3 && wire == Len) {
            Cursor s{};
            if (!c.bytes(s))
                return std::nullopt;
            text = s.string();
        } else if (field == 4 && wire == Varint) {
            quint64 v = 0;
            if (!c.varint(v))
                return std::nullopt;
            text = v ? QStringLiteral("true") : QStringLiteral("false");
        } else if (!c.skip(wire)) {
            return std::nullopt;
        } else {
            text.reset(); // null, struct or list value
        }
    }
    return text;
}

// HParamsPluginData -> session_start_info.hparams
void decodeHparams(Cursor c, TfEvent& ev)
{
    while (!c.atEnd()) {
        int field = 0, wire = 0;
        if (!c.tag(field, wire))
            return;
        if (field != 3 || wire != Len) {
            if (!c.skip(wire))
                return;
            continue;
        }
        Cursor info{};
        if (!c.bytes(info))
            return;
        while (!info.atEnd()) {
            int f2 = 0, w2 = 0;
            if (!info.tag(f2, w2))
                return;
            if (f2 != 1 || w2 != Len) {
                if (!info.skip(w2))
                    return;
                continue;
            }
            Cursor entry{};
            if (!info.bytes(entry))
                return;
            QString key;
            std::optional<QString> value;
            while (!entry.atEnd()) {
                int f3 = 0, w3 = 0;
                if (!entry.tag(f3, w3))
                    return;
                Cursor part{};
                if (f3 == 1 && w3 == Len) {
                    if (!entry.bytes(part))
                        return;
                    key = part.string();
                } else if (f3 == 2 && w3 == Len) {
                    if (!entry.bytes(part))
                        return;
                    value = protobufValueText(part);
                } else if (!entry.skip(w3)) {
                    return;
                }
            }
            if (!key.isEmpty() && value)
                ev.hparams.append({key, *value});
        }
    }
}

void decodeValue(Cursor c, TfEvent& ev)
{
    QString tag;
    std::optional<double> simple;
    std::optional<double> tensor;
    bool hasMetadata = false;
    QString plugin;
    while (!c.atEnd()) {
        int field = 0, wire = 0;
        if (!c.tag(field, wire))
            return;
        if (field == 1 && wire == Len) {
            Cursor s{};
            if (!c.bytes(s))
                return;
            tag = s.string();
        } else if (field == 2 && wire == Fixed32) {
            quint32 w = 0;
            if (!c.fixed32(w))
                return;
            simple = double(asFloat(w));
        } else if (field == 8 && wire == Len) {
            Cursor t{};
            if (!c.bytes(t))
                return;
            tensor = tensorScalar(t);
            if (!c.error->isEmpty())
                return;
        } else if (field == 9 && wire == Len) {
            Cursor m{};
            if (!c.bytes(m))
                return;
            hasMetadata = true;
            QByteArrayView content;
            plugin = pluginName(m, &content);
            if (!c.error->isEmpty())
                return;
            if (plugin == QLatin1String("hparams") && !content.isEmpty()) {
                const auto* b = reinterpret_cast<const unsigned char*>(content.data());
                // Offsets in messages count from the content's start inside the event.
                decodeHparams(Cursor{b, b + content.size(), b, c.base + (b - c.start), c.error}, ev);
                if (!c.error->isEmpty())
                    return;
            }
        } else if (!c.skip(wire)) {
            return;
        }
    }
    if (hasMetadata && !plugin.isEmpty() && plugin != QLatin1String("scalars")) {
        ev.nonScalarTags.append(tag);
        return;
    }
    if (simple)
        ev.scalars.append(TfScalar{tag, *simple, plugin});
    else if (tensor)
        ev.scalars.append(TfScalar{tag, *tensor, plugin});
}

} // namespace

Result<TfEvent> decodeTfEvent(QByteArrayView event)
{
    QString error;
    const auto* b = reinterpret_cast<const unsigned char*>(event.data());
    Cursor c{b, b + event.size(), b, 0, &error};
    TfEvent ev;
    while (!c.atEnd() && error.isEmpty()) {
        int field = 0, wire = 0;
        if (!c.tag(field, wire))
            break;
        if (field == 1 && wire == Fixed64) {
            quint64 w = 0;
            if (c.fixed64(w))
                ev.wallTime = asDouble(w);
        } else if (field == 2 && wire == Varint) {
            quint64 v = 0;
            if (c.varint(v))
                ev.step = qint64(v);
        } else if (field == 5 && wire == Len) {
            Cursor summary{};
            if (!c.bytes(summary))
                break;
            while (!summary.atEnd() && error.isEmpty()) {
                int f2 = 0, w2 = 0;
                if (!summary.tag(f2, w2))
                    break;
                if (f2 == 1 && w2 == Len) {
                    Cursor value{};
                    if (summary.bytes(value))
                        decodeValue(value, ev);
                } else {
                    summary.skip(w2);
                }
            }
        } else {
            c.skip(wire);
        }
    }
    if (!error.isEmpty())
        return fail(error);
    return ev;
}

} // namespace ty
