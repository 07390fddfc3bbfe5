#include "RunLabelCommands.h"

#include "Cli.h"
#include "core/common/TerminalEscape.h"
#include "core/store/ResultStore.h"

#include <QFile>
#include <QTextStream>

namespace ty::cli {

namespace {

int usage(QTextStream& err, const QString& message)
{
    err << "trainyardctl: " << message << "\nTry 'trainyardctl --help'.\n";
    return Usage;
}

int apply(const RunAnnotator& annotate, const RunRecord& run, const RunAnnotation& a, QTextStream& err)
{
    // The run was found and the input checked: what fails now is the
    // service (or the database behind it), or a run removed meanwhile.
    if (auto r = annotate(run.id, a); !r) {
        err << "trainyardctl: " << escapeForTerminal(r.error().message) << '\n';
        return r.error().kind == ErrorKind::NotFound        ? NoSuchRun
                : r.error().kind == ErrorKind::InvalidInput ? Usage
                                                            : Unavailable;
    }
    return Ok;
}

} // namespace

int runLabelCommand(const QString& command, ResultStore& store, const RunFinder& find, const RunAnnotator& annotate,
        const QStringList& args, QTextStream& out, QTextStream& err)
{
    if (args.isEmpty())
        return usage(err, QStringLiteral("%1 needs a RUN").arg(command));
    const auto lookup = [&](const QString& spec, RunRecord& into) {
        auto r = find(spec);
        if (!r) {
            err << escapeForTerminal(r.error().message) << '\n';
            return false;
        }
        into = *r;
        return true;
    };

    if (command == u"archive" || command == u"unarchive") {
        const bool archive = command == u"archive";
        int status = Ok;
        for (const QString& spec : args) {
            RunRecord run;
            if (!lookup(spec, run)) {
                status = NoSuchRun;
                continue;
            }
            if (archive && !isTerminal(run.state)) {
                err << "run " << run.id << " is " << runStateName(run.state)
                    << ": only finished runs can be archived (cancel it first, or wait)\n";
                status = Usage;
                continue;
            }
            RunAnnotation a;
            a.archived = archive;
            if (const int s = apply(annotate, run, a, err); s != Ok) {
                status = s;
                continue;
            }
            out << (archive ? "archived run " : "unarchived run ") << run.id << " (" << escapeForTerminal(run.name)
                << ")\n";
        }
        return status;
    }

    RunRecord run;
    if (!lookup(args.front(), run))
        return NoSuchRun;
    const QStringList rest = args.mid(1);

    if (command == u"rename") {
        if (rest.size() != 1)
            return usage(err, QStringLiteral("rename needs RUN and the new NAME"));
        if (rest.front().trimmed().isEmpty())
            return usage(err, QStringLiteral("rename: a run's name cannot be empty"));
        RunAnnotation a;
        a.name = rest.front();
        if (const int s = apply(annotate, run, a, err); s != Ok)
            return s;
        out << "renamed run " << run.id << " from " << escapeForTerminal(run.name) << " to "
            << escapeForTerminal(rest.front().trimmed()) << '\n';
        return Ok;
    }

    if (command == u"tag") {
        if (rest.isEmpty()) {
            out << escapeForTerminal(run.tags.join(u' ')) << '\n';
            return Ok;
        }
        QStringList tags = run.tags;
        for (const QString& t : rest) {
            if (t.contains(u',') || t.contains(u' ') || t.contains(u'\t') || t.contains(u'\n'))
                return usage(err,
                        QStringLiteral("tag: '%1' has a comma or a space in it (one tag per argument)")
                                .arg(escapeForTerminal(t)));
            if (t.startsWith(u'-') && t.size() > 1) {
                tags.removeAll(t.mid(1));
            } else {
                const QString tag = t.startsWith(u'+') ? t.mid(1) : t;
                if (!tags.contains(tag))
                    tags << tag;
            }
        }
        RunAnnotation a;
        a.tags = tags;
        if (const int s = apply(annotate, run, a, err); s != Ok)
            return s;
        out << "run " << run.id
            << " tags: " << escapeForTerminal(store.run(run.id) ? store.run(run.id)->tags.join(u' ') : QString())
            << '\n';
        return Ok;
    }

    // note
    if (rest.isEmpty()) {
        for (const QString& line : run.notes.split(u'\n', Qt::SkipEmptyParts)) // one line each, escaped
            out << escapeForTerminal(line) << '\n';
        return Ok;
    }
    if (rest.size() != 1)
        return usage(err, QStringLiteral("note needs RUN and one TEXT (quote it), or - to read it from stdin"));
    QString text = rest.front();
    if (text == u"-") {
        QFile in;
        if (!in.open(stdin, QIODevice::ReadOnly)) {
            err << "trainyardctl: cannot read the notes from stdin\n";
            return Unavailable;
        }
        text = QString::fromUtf8(in.readAll());
        while (text.endsWith(u'\n'))
            text.chop(1);
    }
    RunAnnotation a;
    a.notes = text;
    if (const int s = apply(annotate, run, a, err); s != Ok)
        return s;
    out << (text.isEmpty() ? "cleared the notes of run " : "saved the notes of run ") << run.id << '\n';
    return Ok;
}

} // namespace ty::cli
