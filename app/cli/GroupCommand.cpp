#include "GroupCommand.h"

#include "Cli.h"

#include "core/service/ServiceProtocol.h"
#include "core/store/ResultStore.h"

#include <QCommandLineParser>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace ty::cli {

namespace {

QJsonObject groupJson(const RunGroupRecord& g)
{
    QJsonObject o{{QStringLiteral("id"), g.id}, {QStringLiteral("kind"), runGroupKindName(g.kind)},
            {QStringLiteral("name"), g.name}, {QStringLiteral("created_at"), jsonTime(g.createdAt)},
            {QStringLiteral("runs"), g.runs}};
    o.insert(QStringLiteral("parent"), g.parent > 0 ? QJsonValue(g.parent) : QJsonValue());
    return o;
}

// "sweep", "gang", ... or nullopt with the usage error printed.
std::optional<RunGroupKind> kindArgument(const QString& text)
{
    const auto kind = runGroupKindFromName(text);
    if (!kind)
        usageError(QStringLiteral("group ls --kind: '%1' is not a kind of group (sweep, gang, pipeline, attempts)")
                           .arg(escapedName(text)));
    return kind;
}

int list(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addOption({QStringLiteral("kind"), QStringLiteral("only groups of this kind"), QStringLiteral("KIND")});
    p.addOption({QStringLiteral("json"), QStringLiteral("one JSON document on stdout")});
    if (!p.parse(QStringList{QStringLiteral("group ls")} + args))
        return usageError(p.errorText());
    if (!p.positionalArguments().isEmpty())
        return usageError(QStringLiteral("group ls takes no argument"));
    std::optional<RunGroupKind> kind;
    if (p.isSet(QStringLiteral("kind"))) {
        kind = kindArgument(p.value(QStringLiteral("kind")));
        if (!kind)
            return Usage;
    }
    const QList<RunGroupRecord> groups = ctx.store->groups(kind);
    if (p.isSet(QStringLiteral("json"))) {
        QJsonArray a;
        for (const RunGroupRecord& g : groups)
            a.append(groupJson(g));
        printJson(QJsonDocument(a));
        return Ok;
    }
    out() << QStringLiteral("%1  %2  %3  %4  %5  %6\n")
                     .arg(QStringLiteral("ID").rightJustified(5), QStringLiteral("KIND").leftJustified(8),
                             QStringLiteral("RUNS").rightJustified(4), QStringLiteral("CREATED").leftJustified(19),
                             QStringLiteral("PART OF").leftJustified(7), QStringLiteral("NAME"));
    for (const RunGroupRecord& g : groups)
        out() << QStringLiteral("%1  %2  %3  %4  %5  %6\n")
                         .arg(QString::number(g.id).rightJustified(5), runGroupKindName(g.kind).leftJustified(8),
                                 QString::number(g.runs).rightJustified(4), localTime(g.createdAt).leftJustified(19),
                                 (g.parent > 0 ? QString::number(g.parent) : QStringLiteral("-")).leftJustified(7),
                                 escapedName(g.name));
    return Ok;
}

int show(Context& ctx, const QStringList& args)
{
    QCommandLineParser p;
    p.addOption({QStringLiteral("json"), QStringLiteral("one JSON document on stdout")});
    p.addPositionalArgument(QStringLiteral("ID"), QStringLiteral("the group's id"));
    if (!p.parse(QStringList{QStringLiteral("group show")} + args))
        return usageError(p.errorText());
    if (p.positionalArguments().size() != 1)
        return usageError(QStringLiteral("group show takes one group id"));
    bool ok = false;
    const RunGroupId id = p.positionalArguments().front().toLongLong(&ok);
    if (!ok || id <= 0)
        return usageError(QStringLiteral("group show: '%1' is not a group id (a number, as group ls lists)")
                                  .arg(escapedName(p.positionalArguments().front())));
    const auto group = ctx.store->group(id);
    if (!group) {
        err() << QStringLiteral("trainyardctl: no run group %1 in %2\n").arg(id).arg(ctx.store->location());
        return NoSuchRun;
    }
    QList<RunGroupRecord> parts;
    for (const RunGroupRecord& g : ctx.store->groups())
        if (g.parent == id)
            parts.append(g);
    const auto members = ctx.store->groupMembers(id);
    QList<RunRecord> runs;
    for (const auto& [run, m] : members)
        if (auto r = ctx.store->run(run))
            runs.append(*r);
    if (p.isSet(QStringLiteral("json"))) {
        QJsonObject o = groupJson(*group);
        QJsonArray a;
        for (qsizetype i = 0; i < members.size(); ++i) {
            const RunRecord* r = nullptr;
            for (const RunRecord& x : runs)
                if (x.id == members[i].first)
                    r = &x;
            a.append(QJsonObject{{QStringLiteral("run"), members[i].first},
                    {QStringLiteral("position"), members[i].second.position},
                    {QStringLiteral("role"), members[i].second.role}, {QStringLiteral("name"), r ? r->name : QString()},
                    {QStringLiteral("state"), r ? runStateName(r->state) : QString()}});
        }
        o.insert(QStringLiteral("members"), a);
        QJsonArray groups;
        for (const RunGroupRecord& g : std::as_const(parts))
            groups.append(groupJson(g));
        o.insert(QStringLiteral("groups"), groups);
        printJson(QJsonDocument(o));
        return Ok;
    }
    const auto line = [](const char* key, const QString& value) {
        out() << QString::fromLatin1(key).leftJustified(9) << value << '\n';
    };
    line("group", QStringLiteral("%1 %2").arg(id).arg(escapedName(group->name)));
    line("kind", runGroupKindName(group->kind));
    line("created", localTime(group->createdAt));
    if (group->parent > 0)
        line("part of", QString::number(group->parent));
    for (const RunGroupRecord& g : std::as_const(parts))
        line("has",
                QStringLiteral("%1 %2 %3 (%4 runs)")
                        .arg(runGroupKindName(g.kind))
                        .arg(g.id)
                        .arg(escapedName(g.name))
                        .arg(g.runs));
    if (members.isEmpty())
        return Ok;
    const QString where = group->kind == RunGroupKind::Gang ? QStringLiteral("RANK")
            : group->kind == RunGroupKind::Attempts         ? QStringLiteral("ATTEMPT")
            : group->kind == RunGroupKind::Pipeline         ? QStringLiteral("STEP")
                                                            : QStringLiteral("COMBINATION");
    out() << '\n'
          << QStringLiteral("%1  %2  %3  %4\n")
                     .arg(QStringLiteral("RUN").rightJustified(5), where.leftJustified(16),
                             QStringLiteral("STATE").leftJustified(9), QStringLiteral("NAME"));
    for (const auto& [run, m] : members) {
        const RunRecord* r = nullptr;
        for (const RunRecord& x : std::as_const(runs))
            if (x.id == run)
                r = &x;
        const QString place = m.role.isEmpty() ? QString::number(m.position) : escapedName(m.role);
        out() << QStringLiteral("%1  %2  %3  %4\n")
                         .arg(QString::number(run).rightJustified(5), place.leftJustified(16),
                                 (r ? runStateName(r->state) : QStringLiteral("-")).leftJustified(9),
                                 r ? escapedName(r->name) : QString());
    }
    return Ok;
}

} // namespace

int cmdGroup(Context& ctx, const QStringList& args)
{
    const QString sub = args.value(0);
    if (sub == u"ls")
        return list(ctx, args.mid(1));
    if (sub == u"show")
        return show(ctx, args.mid(1));
    return usageError(QStringLiteral("group needs ls or show"));
}

} // namespace ty::cli
