#pragma once

// Client side of the trainyard-agent protocol (app/agent/PROTOCOL.md) over any
// AgentTransport. Requests are multiplexed: each gets an id and exactly one
// callback; output of tails arrives as signals and never waits for a reply.
//
// Thread affinity: the thread of the object (callbacks and signals run there).
// Lifetime: callbacks run on the client's thread from the event loop, never
// from inside request(); do not delete the client from a callback (use
// deleteLater()). When the connection ends, every pending callback gets an
// error naming the node, the op and the reason, then disconnected() is emitted.

#include "core/common/Result.h"
#include "core/nodes/AgentFiles.h"
#include "core/nodes/AgentFrameDecoder.h"
#include "core/nodes/AgentReadFile.h"
#include "core/nodes/NodeFiles.h"
#include "core/logs/StderrRanges.h"
#include "core/nodes/AgentTypes.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>

#include <functional>
#include <memory>

namespace ty {

class AgentTransport;

class AgentClient final : public QObject {
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(AgentClient)
public:
    enum class State { Idle, Connecting, Ready, Disconnected };
    using ReplyCallback = std::function<void(const Result<QJsonObject>&)>;

    // Takes ownership of the transport.
    explicit AgentClient(std::unique_ptr<AgentTransport> transport, QObject* parent = nullptr);
    ~AgentClient() override;

    // Opens the transport; ready() follows the agent's hello (protocol 1),
    // or disconnected() on failure or a protocol mismatch. Requests made
    // before ready() are sent once it arrives.
    void connectToAgent();
    // Closes the connection; pending requests fail with `reason`, which
    // disconnected() carries too. Runs on the node go on.
    void disconnectFromAgent(const QString& reason = QStringLiteral("disconnected by the client"));

    State state() const { return m_state; }
    bool isReady() const { return m_state == State::Ready; }
    // Console frames that came LZ4-compressed (revision 8), over the
    // client's life: counts for benchmarks and tests.
    const AgentFrameDecoder::Compression& consoleCompression() const { return m_decoder.compression(); }
    const AgentHello& hello() const { return m_hello; }
    // Node name used in error messages (default: the transport's describe()).
    void setNodeName(const QString& name) { m_nodeName = name; }
    QString nodeName() const;

    // Sends {"id":N,"op":op,...args}. `onReply` gets the reply object (ok)
    // or the agent's error. Returns the request id (> 0).
    quint64 request(const QString& op, QJsonObject args, ReplyCallback onReply);

    // Whether `error` (a request's callback error) says the connection ended
    // after the request was made and before its reply came: the agent may
    // have carried it out (a start whose run is going), so only the agent's
    // own record (`list`, `status`) says what happened.
    static bool replyLost(const Error& error);

    quint64 ping(std::function<void(const Result<qint64>&)> cb); // agent clock, ms since epoch
    quint64 start(const AgentStartRequest& req, std::function<void(const Result<AgentStartReply>&)> cb);
    // Streams console bytes from `offset` as output() signals; with `follow`,
    // also future bytes, then tailEnded() once the run has exited. The
    // callback gets the console size at the time of the request.
    // A console that is, or becomes, shorter than the tail's offset was
    // truncated on the node. With `followTruncation`, consoleTruncated() says
    // so and output() goes on from offset 0 of the new content (`tail -F`);
    // `generation` (>= 0) is that of the last consoleTruncated() followed for
    // the run (0: none), so a truncation is found even where the new content
    // has outgrown `offset` (PROTOCOL.md `tail`).
    // Without it, or from an agent before protocol revision 3, an offset
    // beyond the size is refused (the callback gets the error) and a
    // followed console that became shorter sends nothing until it is longer.
    quint64 tail(const QString& run, qint64 offset, bool follow, std::function<void(const Result<qint64>&)> cb,
            bool followTruncation = false, qint64 generation = -1);
    quint64 untail(const QString& run, std::function<void(const Result<void>&)> cb = {});
    // `signal` (one of agentproto::kCancelSignals; empty: SIGTERM) to the
    // run's process group, SIGKILL after graceMs; runExited() follows. An
    // agent before protocol revision 6 ignores `signal` and sends SIGTERM
    // (the caller checks hello().revision to say so).
    quint64 cancel(
            const QString& run, int graceMs, std::function<void(const Result<void>&)> cb, const QString& signal = {});
    quint64 list(std::function<void(const Result<QList<AgentRunStatus>>&)> cb);
    quint64 status(const QString& run, std::function<void(const Result<AgentRunStatus>&)> cb);
    quint64 gpus(std::function<void(const Result<QList<AgentGpu>>&)> cb);
    // `listening_ports` (revision 7): the node's TCP ports in LISTEN,
    // ascending. An agent before revision 7 answers with an error ("unknown
    // op"): check hello().revision first.
    quint64 listeningPorts(std::function<void(const Result<QList<int>>&)> cb);
    // `read_file`: up to `maxBytes` (<= 256 KiB) of `path` (relative to the
    // run's `root`: "workdir" or "run_dir") from `offset`. Errors name the
    // run and path (missing file, a path leading outside the root).
    quint64 readFile(const QString& run, const QString& root, const QString& path, qint64 offset, qint64 maxBytes,
            std::function<void(const Result<AgentFileChunk>&)> cb);
    // `list_files`: the run's files matching `globs` (relative to its workdir
    // and run directory; see AgentFiles.h). Symlinks are reported, not followed.
    quint64 listFiles(
            const QString& run, const QStringList& globs, std::function<void(const Result<AgentFileList>&)> cb);
    // Revision 4, `slurm_info`: the Slurm version and partitions the login
    // node's agent reports (PROTOCOL.md "Slurm"), as the reply's object
    // (`version`, `partitions`); an error naming why (no sinfo there).
    quint64 slurmInfo(std::function<void(const Result<QJsonObject>&)> cb);
    // Revision 5, `start_array` (PROTOCOL.md "Job arrays"): submits the Slurm
    // runs `req.runs` as one job array; task i is runs[i], a Slurm run of its
    // own from then on (its `slurm` and `exited` events, status, tail and
    // cancel as for a run of start()). `cb` gets the array's job id and one
    // reply per run, in the request's order, on the client's thread (from the
    // event loop, never from inside startArray()). Errors: the agent's refusal,
    // naming the run at fault ("runs[1] (run r2): workdir /x does not exist",
    // an id twice, a refused sbatch option, an env name that is no shell
    // name), or sbatch's own; then none of the runs exists on the node. An
    // agent before revision 5 answers "unknown op". Like start(), a lost
    // reply (replyLost()) leaves the runs' fate to `list`/`status`.
    quint64 startArray(const AgentArrayRequest& req, std::function<void(const Result<AgentArrayReply>&)> cb);
    // Runs `job` on the node's files through the transport (SFTP for SSH nodes,
    // this machine's files for the local node); `done` runs on this thread.
    void runFileJob(NodeFileJob job, std::function<void(const Result<void>&)> done);
    // AgentTransport::probe(): while disconnected, whether the node answers again.
    void probe(std::function<void(std::optional<bool>)> done);
    // AgentTransport::rejectedHostKeyFingerprint() / trustNewHostKey().
    QString rejectedHostKeyFingerprint() const;
    bool trustNewHostKey();

Q_SIGNALS:
    void ready(const ty::AgentHello& hello);
    // Console bytes [offset, offset + bytes.size()) of `run`; `stderrRanges`:
    // those of them that came from the run's stderr (absolute offsets, in
    // order; always empty from an agent before protocol revision 2).
    void output(const QString& run, qint64 offset, const QByteArray& bytes, const ty::ByteRanges& stderrRanges);
    // Everything of a tail up to `offset` was delivered; the tail is over.
    void tailEnded(const QString& run, qint64 offset);
    // (A tail with followTruncation.) The console of `run` on the node is
    // `size` bytes, less than `offset`, where its tail was (everything before
    // it was delivered, or the tail was asked to start there): it was
    // truncated on the node. The output() signals after this one carry
    // offsets of the new content, from 0. `generation`: what to pass to
    // tail() for this run from now on.
    void consoleTruncated(const QString& run, qint64 offset, qint64 size, qint64 generation);
    void runExited(const ty::AgentRunStatus& status);
    // Revision 4: a Slurm batch job's state, reason or place in the queue changed (PROTOCOL.md "Slurm").
    void slurmChanged(const ty::AgentRunStatus& status);
    void disconnected(const QString& reason, ty::ErrorKind kind = ty::ErrorKind::Unspecified);
    // The transport's warning() (AgentTransport.h), before ready().
    void warning(const QString& message);

private:
    struct Pending {
        QString op;
        QString run;
        ReplyCallback callback;
    };

    void onOpened();
    void onReceived(const QByteArray& bytes);
    void onClosed(const QString& reason, ErrorKind kind);
    void handleFrame(const AgentFrame& frame);
    // Before the hello: whether `bytes` completed the login shell's output
    // (if any) and the agent's first line; feeds the decoder from there.
    bool skipPreamble(const QByteArray& bytes);
    void fail(const QString& reason, ErrorKind kind = ErrorKind::Unspecified);
    void send(const QJsonObject& message);
    void deliverLater(ReplyCallback cb, Result<QJsonObject> result);

    AgentTransport* m_transport = nullptr; // owned (child)
    AgentFrameDecoder m_decoder;
    State m_state = State::Idle;
    AgentHello m_hello;
    QString m_nodeName;
    quint64 m_nextId = 1;
    QHash<quint64, Pending> m_pending;
    QList<QByteArray> m_queued; // requests made before the hello
    // What came before the agent's first line (a shell startup file that
    // prints to stdout), while it is not known to be over; 64 KiB at most.
    QByteArray m_preamble;
    bool m_preambleDone = false;
};

} // namespace ty
