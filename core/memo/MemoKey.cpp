#include "MemoKey.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonValue>

#include <algorithm>

namespace ty {
namespace {

// RFC 8785 §3.2.2.2 string serialisation.
void putString(QByteArray& out, const QString& s)
{
    out += '"';
    for (const char c : s.toUtf8()) {
        const auto u = static_cast<unsigned char>(c);
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
            if (u < 0x20) {
                static const char hex[] = "0123456789abcdef";
                out += "\\u00";
                out += hex[u >> 4];
                out += hex[u & 0xf];
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

// Members sorted by name in code point order (= UTF-8 byte order).
void putMap(QByteArray& out, const QMap<QString, QString>& m)
{
    QList<QPair<QByteArray, QString>> items;
    for (auto it = m.cbegin(); it != m.cend(); ++it)
        items.append({it.key().toUtf8(), it.value()});
    std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    out += '{';
    for (qsizetype i = 0; i < items.size(); ++i) {
        if (i)
            out += ',';
        putString(out, QString::fromUtf8(items[i].first));
        out += ':';
        putString(out, items[i].second);
    }
    out += '}';
}

QJsonArray filesToJson(const QList<FileDigest>& files)
{
    QJsonArray a;
    for (const FileDigest& f : files)
        a.append(QJsonObject{{QStringLiteral("path"), f.path}, {QStringLiteral("kind"), kindName(f.kind)},
                {QStringLiteral("size"), f.size}, {QStringLiteral("sha256"), f.sha256}});
    return a;
}

QJsonObject mapToJson(const QMap<QString, QString>& m)
{
    QJsonObject o;
    for (auto it = m.cbegin(); it != m.cend(); ++it)
        o.insert(it.key(), it.value());
    return o;
}

Result<QMap<QString, QString>> mapFromJson(const QJsonValue& v, const char* name)
{
    if (!v.isUndefined() && !v.isObject())
        return fail(QStringLiteral("memo components: \"%1\" is not an object").arg(QLatin1String(name)));
    QMap<QString, QString> out;
    const QJsonObject o = v.toObject();
    for (auto it = o.begin(); it != o.end(); ++it) {
        if (!it.value().isString())
            return fail(QStringLiteral("memo components: \"%1\".\"%2\" is not a string")
                                .arg(QLatin1String(name), it.key()));
        out.insert(it.key(), it.value().toString());
    }
    return out;
}

Result<QStringList> stringsFromJson(const QJsonValue& v, const char* name)
{
    if (!v.isUndefined() && !v.isArray())
        return fail(QStringLiteral("memo components: \"%1\" is not an array").arg(QLatin1String(name)));
    QStringList out;
    for (const QJsonValue& s : v.toArray()) {
        if (!s.isString())
            return fail(QStringLiteral("memo components: \"%1\" holds a non-string").arg(QLatin1String(name)));
        out << s.toString();
    }
    return out;
}

Result<QList<FileDigest>> filesFromJson(const QJsonValue& v, const char* name)
{
    if (!v.isUndefined() && !v.isArray())
        return fail(QStringLiteral("memo components: \"%1\" is not an array").arg(QLatin1String(name)));
    QList<FileDigest> out;
    for (const QJsonValue& e : v.toArray()) {
        const QJsonObject o = e.toObject();
        FileDigest f;
        f.path = o.value(QStringLiteral("path")).toString();
        f.size = o.value(QStringLiteral("size")).toInteger(-1);
        f.sha256 = o.value(QStringLiteral("sha256")).toString();
        if (!e.isObject() || f.path.isEmpty() || f.size < 0
                || !kindFromName(o.value(QStringLiteral("kind")).toString(), &f.kind) || !isSha256Hex(f.sha256))
            return fail(QStringLiteral("memo components: an entry of \"%1\" is not {path, kind, size, sha256}")
                                .arg(QLatin1String(name)));
        out.append(f);
    }
    return out;
}

} // namespace

MemoComponents applyIgnore(MemoComponents c, const QStringList& ignore)
{
    for (const QString& name : ignore) {
        c.params.remove(name);
        c.env.remove(name);
        if (!c.ignored.contains(name))
            c.ignored << name;
    }
    c.ignored.sort();
    return c;
}

QByteArray canonicalJson(const MemoComponents& c)
{
    QByteArray out;
    out.reserve(1024);
    out += "{\"argv\":[";
    for (qsizetype i = 0; i < c.argv.size(); ++i) {
        if (i)
            out += ',';
        putString(out, c.argv[i]);
    }
    out += "],\"code\":";
    QList<FileDigest> code = c.codeFiles;
    sortByPath(code);
    putString(out, treeDigest(code));
    out += ",\"command\":";
    putString(out, c.command);
    out += ",\"env\":";
    putMap(out, c.env);
    out += ",\"format\":";
    putString(out, QString::fromLatin1(kMemoKeyFormat));
    out += ",\"gpu_count\":" + QByteArray::number(c.gpuCount);
    out += ",\"gpu_type\":";
    putString(out, c.gpuType);
    out += ",\"inputs\":[";
    QList<FileDigest> inputs = c.inputs;
    sortByPath(inputs);
    for (qsizetype i = 0; i < inputs.size(); ++i) {
        if (i)
            out += ',';
        out += "{\"kind\":";
        putString(out, kindName(inputs[i].kind));
        out += ",\"path\":";
        putString(out, inputs[i].path);
        out += ",\"sha256\":";
        putString(out, inputs[i].sha256);
        out += ",\"size\":" + QByteArray::number(inputs[i].size) + '}';
    }
    out += "],\"key_extra\":";
    putString(out, c.keyExtra);
    out += ",\"params\":";
    putMap(out, c.params);
    out += ",\"upstream\":";
    putMap(out, c.upstream);
    out += '}';
    return out;
}

QString memoKey(const MemoComponents& c)
{
    return QString::fromLatin1(QCryptographicHash::hash(canonicalJson(c), QCryptographicHash::Sha256).toHex());
}

QJsonObject componentsToJson(const MemoComponents& c)
{
    return QJsonObject{
            {QStringLiteral("format"), QString::fromLatin1(kMemoKeyFormat)},
            {QStringLiteral("step"), c.step},
            {QStringLiteral("command"), c.command},
            {QStringLiteral("argv"), QJsonArray::fromStringList(c.argv)},
            {QStringLiteral("env"), mapToJson(c.env)},
            {QStringLiteral("params"), mapToJson(c.params)},
            {QStringLiteral("gpu_type"), c.gpuType},
            {QStringLiteral("gpu_count"), c.gpuCount},
            {QStringLiteral("code_files"), filesToJson(c.codeFiles)},
            {QStringLiteral("inputs"), filesToJson(c.inputs)},
            {QStringLiteral("upstream"), mapToJson(c.upstream)},
            {QStringLiteral("key_extra"), c.keyExtra},
            {QStringLiteral("ignored"), QJsonArray::fromStringList(c.ignored)},
    };
}

Result<MemoComponents> componentsFromJson(const QJsonObject& o)
{
    if (o.value(QStringLiteral("format")).toString() != QLatin1String(kMemoKeyFormat))
        return fail(QStringLiteral("memo components: format is '%1', not %2")
                            .arg(o.value(QStringLiteral("format")).toString(), QLatin1String(kMemoKeyFormat)));
    for (const char* name : {"step", "command", "gpu_type", "key_extra"})
        if (const QJsonValue v = o.value(QLatin1String(name)); !v.isUndefined() && !v.isString())
            return fail(QStringLiteral("memo components: \"%1\" is not a string").arg(QLatin1String(name)));
    if (const QJsonValue v = o.value(QStringLiteral("gpu_count")); !v.isUndefined() && !v.isDouble())
        return fail(QStringLiteral("memo components: \"gpu_count\" is not a number"));
    MemoComponents c;
    c.step = o.value(QStringLiteral("step")).toString();
    c.command = o.value(QStringLiteral("command")).toString();
    c.gpuType = o.value(QStringLiteral("gpu_type")).toString();
    c.gpuCount = o.value(QStringLiteral("gpu_count")).toInt();
    c.keyExtra = o.value(QStringLiteral("key_extra")).toString();
    auto argv = stringsFromJson(o.value(QStringLiteral("argv")), "argv");
    auto ignored = stringsFromJson(o.value(QStringLiteral("ignored")), "ignored");
    auto env = mapFromJson(o.value(QStringLiteral("env")), "env");
    auto params = mapFromJson(o.value(QStringLiteral("params")), "params");
    auto upstream = mapFromJson(o.value(QStringLiteral("upstream")), "upstream");
    auto code = filesFromJson(o.value(QStringLiteral("code_files")), "code_files");
    auto inputs = filesFromJson(o.value(QStringLiteral("inputs")), "inputs");
    for (const Error* e :
            {argv ? nullptr : &argv.error(), ignored ? nullptr : &ignored.error(), env ? nullptr : &env.error(),
                    params ? nullptr : &params.error(), upstream ? nullptr : &upstream.error(),
                    code ? nullptr : &code.error(), inputs ? nullptr : &inputs.error()})
        if (e)
            return std::unexpected(*e);
    c.argv = *argv;
    c.ignored = *ignored;
    c.env = *env;
    c.params = *params;
    c.upstream = *upstream;
    c.codeFiles = *code;
    c.inputs = *inputs;
    return c;
}

} // namespace ty
