// trainyard_test_kbdint_sshd: a small SSH server, made with libssh's server
// API, for test_ssh_kbdint. It speaks real SSH on a loopback address and
// asks what a login node with a second factor asks: a public key first, then
// keyboard-interactive questions with a one-time code (RFC 4256), as
// OpenSSH's `AuthenticationMethods publickey,keyboard-interactive` does.
//
// Why not OpenSSH's sshd (as SshdFixture): sshd asks keyboard-interactive
// questions only through PAM, under its fixed PAM service, so a question of
// our own would mean a file in /etc/pam.d: the machine's configuration, which
// a test must not touch. Here the server is ours, and so are its questions.
//
// After the login it runs what the client asks, as sshd does: an `exec`
// request through /bin/sh -c (the agent's command line: the real agent
// handshake then goes over it) and the `sftp` subsystem through OpenSSH's
// sftp-server program (file jobs). Each connection is served by a process
// of its own (fork), as sshd's.
//
// Usage: trainyard_test_kbdint_sshd --listen ADDR --host-key FILE
//          --authorized-key FILE.pub --code CODE [--port N (0: any)]
//          [--methods publickey,keyboard-interactive | keyboard-interactive]
//          [--zero-rounds]    a round without prompts before the question and
//                             one after a right answer (as OpenSSH's PAM)
//          [--two-prompts]    a second, echoed prompt ("Account:") besides the code
//          [--reply-delay-ms N]  wait before judging the answers (a Duo push)
//          [--sftp-server PATH]
// Prints "listening PORT" on stdout once it listens; what happens (never
// the answers) goes to stderr as "kbdint-sshd: EVENT" lines that the test
// counts: "kbdint start", "kbdint empty round answered", "kbdint answers
// received", "kbdint code accepted", "kbdint code refused",
// "publickey accepted", "authenticated", "exec", "subsystem sftp".

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <libssh/server.h>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <string>

namespace {

struct Options {
    std::string listen = "127.0.0.1";
    int port = 0;
    std::string hostKey;
    std::string authorizedKey;
    std::string code;
    bool needPubkey = true;
    bool zeroRounds = false;
    bool twoPrompts = false;
    int replyDelayMs = 0;
    std::string sftpServer = "/usr/lib/openssh/sftp-server";
};

Options g_options;

void event(const char* format, ...)
{
    char line[512];
    va_list args;
    va_start(args, format);
    std::vsnprintf(line, sizeof line, format, args);
    va_end(args);
    std::fprintf(stderr, "kbdint-sshd: %s\n", line);
    std::fflush(stderr);
}

// A command run for a channel: its pipes and process.
struct Child {
    ssh_channel channel = nullptr;
    ssh_channel_callbacks_struct callbacks{};
    pid_t pid = -1;
    int in = -1;  // the child's stdin
    int out = -1; // its stdout
    int err = -1; // its stderr
    bool outDone = false;
    bool errDone = false;
    bool closed = false; // the client closed the channel
    bool reported = false;
};

struct Connection {
    ssh_session session = nullptr;
    ssh_event loop = nullptr;
    ssh_key authorized = nullptr;
    bool pubkeyOk = false;
    bool kbdintOk = false;
    bool authenticated = false;
    enum class Stage { None, ZeroBefore, Asked, ZeroAfter } stage = Stage::None;
    int refused = 0;
    std::list<Child> children;
};

int remainingMethods(const Connection& c)
{
    if (g_options.needPubkey && !c.pubkeyOk)
        return SSH_AUTH_METHOD_PUBLICKEY;
    return c.kbdintOk ? 0 : SSH_AUTH_METHOD_INTERACTIVE;
}

void deny(Connection& c, ssh_message m)
{
    ssh_message_auth_set_methods(m, remainingMethods(c));
    ssh_message_reply_default(m);
}

void succeedIfDone(Connection& c, ssh_message m)
{
    if (remainingMethods(c) == 0) {
        ssh_message_auth_reply_success(m, 0);
        c.authenticated = true;
        event("authenticated");
        return;
    }
    ssh_message_auth_set_methods(m, remainingMethods(c));
    ssh_message_auth_reply_success(m, 1); // partial: more to come
}

void askEmptyRound(ssh_message m, const char* instruction)
{
    ssh_message_auth_interactive_request(m, "", instruction, 0, nullptr, nullptr);
}

void askCode(ssh_message m)
{
    const char* prompts[] = {"Verification code: ", "Account: "};
    char echo[] = {0, 1};
    ssh_message_auth_interactive_request(m, "Two-factor login", "A one-time code was sent to your phone.",
            g_options.twoPrompts ? 2 : 1, prompts, echo);
}

// Public keys (libssh's server callback; the message API for them is
// deprecated): a probe of the authorized key is answered PK_OK, its
// signature (checked by libssh) is a partial success while the code remains.
int onPubkey(ssh_session session, const char*, ssh_key key, char signatureState, void* userdata)
{
    auto& c = *static_cast<Connection*>(userdata);
    if (!(remainingMethods(c) & SSH_AUTH_METHOD_PUBLICKEY) || ssh_key_cmp(key, c.authorized, SSH_KEY_CMP_PUBLIC) != 0)
        return SSH_AUTH_DENIED;
    if (signatureState == SSH_PUBLICKEY_STATE_NONE)
        return SSH_AUTH_SUCCESS; // PK_OK: sign with it
    if (signatureState != SSH_PUBLICKEY_STATE_VALID)
        return SSH_AUTH_DENIED;
    c.pubkeyOk = true;
    event("publickey accepted");
    ssh_set_auth_methods(session, remainingMethods(c));
    if (remainingMethods(c) != 0)
        return SSH_AUTH_PARTIAL;
    c.authenticated = true;
    event("authenticated");
    return SSH_AUTH_SUCCESS;
}

void onAuth(Connection& c, ssh_message m)
{
    const int method = ssh_message_subtype(m);
    if (method == SSH_AUTH_METHOD_INTERACTIVE && (remainingMethods(c) & SSH_AUTH_METHOD_INTERACTIVE)) {
        if (!ssh_message_auth_kbdint_is_response(m)) {
            event("kbdint start");
            if (g_options.zeroRounds) {
                c.stage = Connection::Stage::ZeroBefore;
                askEmptyRound(m, "Checking your account.");
            } else {
                c.stage = Connection::Stage::Asked;
                askCode(m);
            }
            return;
        }
        switch (c.stage) {
        case Connection::Stage::ZeroBefore:
            event("kbdint empty round answered (%d answers)", ssh_userauth_kbdint_getnanswers(c.session));
            c.stage = Connection::Stage::Asked;
            askCode(m);
            return;
        case Connection::Stage::Asked: {
            event("kbdint answers received");
            if (g_options.replyDelayMs > 0)
                ::usleep(useconds_t(g_options.replyDelayMs) * 1000);
            const int n = ssh_userauth_kbdint_getnanswers(c.session);
            const char* code = n >= 1 ? ssh_userauth_kbdint_getanswer(c.session, 0) : nullptr;
            const char* account = n >= 2 ? ssh_userauth_kbdint_getanswer(c.session, 1) : nullptr;
            const bool right = n == (g_options.twoPrompts ? 2 : 1) && code && g_options.code == code
                    && (!g_options.twoPrompts || (account && std::strlen(account) > 0));
            if (!right) {
                event("kbdint code refused");
                c.stage = Connection::Stage::None;
                if (++c.refused >= 3) {
                    ssh_disconnect(c.session);
                    return;
                }
                deny(c, m);
                return;
            }
            event("kbdint code accepted");
            if (g_options.zeroRounds) {
                c.stage = Connection::Stage::ZeroAfter;
                askEmptyRound(m, "Code accepted.");
                return;
            }
            c.kbdintOk = true;
            c.stage = Connection::Stage::None;
            succeedIfDone(c, m);
            return;
        }
        case Connection::Stage::ZeroAfter:
            event("kbdint empty round answered (%d answers)", ssh_userauth_kbdint_getnanswers(c.session));
            c.kbdintOk = true;
            c.stage = Connection::Stage::None;
            succeedIfDone(c, m);
            return;
        case Connection::Stage::None: break;
        }
    }
    deny(c, m);
}

// Child output to the channel; end of both streams: the exit status and close.
// (Polled: a process may close its output and live on a little.)
void finishIfDone(Child& child)
{
    if (child.reported || !child.outDone || !child.errDone)
        return;
    int status = 0;
    if (::waitpid(child.pid, &status, WNOHANG) != child.pid)
        return;
    child.reported = true;
    if (!child.closed) {
        const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        ssh_channel_request_send_exit_status(child.channel, code);
        ssh_channel_send_eof(child.channel);
        ssh_channel_close(child.channel);
    }
}

int onChildOutput(socket_t fd, int revents, void* userdata)
{
    auto* child = static_cast<Child*>(userdata);
    if (!(revents & (POLLIN | POLLHUP | POLLERR)))
        return 0;
    const bool isErr = fd == child->err;
    char buf[32768];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
        if (!child->closed) {
            if (isErr)
                ssh_channel_write_stderr(child->channel, buf, uint32_t(n));
            else
                ssh_channel_write(child->channel, buf, uint32_t(n));
        }
        return 0;
    }
    (isErr ? child->errDone : child->outDone) = true; // removed from the loop after this round
    return 0;
}

int onChannelData(ssh_session, ssh_channel, void* data, uint32_t len, int, void* userdata)
{
    auto* child = static_cast<Child*>(userdata);
    if (child->in < 0)
        return int(len);
    const char* p = static_cast<const char*>(data);
    uint32_t left = len;
    while (left > 0) {
        const ssize_t n = ::write(child->in, p, left);
        if (n <= 0)
            break;
        p += n;
        left -= uint32_t(n);
    }
    return int(len);
}

void onChannelEof(ssh_session, ssh_channel, void* userdata)
{
    auto* child = static_cast<Child*>(userdata);
    if (child->in >= 0)
        ::close(child->in);
    child->in = -1;
}

void onChannelClose(ssh_session, ssh_channel, void* userdata)
{
    auto* child = static_cast<Child*>(userdata);
    child->closed = true;
    if (child->in >= 0)
        ::close(child->in);
    child->in = -1;
}

bool spawn(Connection& c, Child& child, const char* program, const char* command)
{
    int in[2], out[2], err[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
        return false;
    const pid_t pid = ::fork();
    if (pid < 0)
        return false;
    if (pid == 0) {
        ::dup2(in[0], 0);
        ::dup2(out[1], 1);
        ::dup2(err[1], 2);
        ::signal(SIGPIPE, SIG_DFL);
        if (command)
            ::execl("/bin/sh", "sh", "-c", command, static_cast<char*>(nullptr));
        else
            ::execl(program, program, static_cast<char*>(nullptr));
        std::fprintf(stderr, "cannot run %s: %s\n", command ? "/bin/sh" : program, std::strerror(errno));
        ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    child.pid = pid;
    child.in = in[1];
    child.out = out[0];
    child.err = err[0];
    ssh_event_add_fd(c.loop, child.out, POLLIN, onChildOutput, &child);
    ssh_event_add_fd(c.loop, child.err, POLLIN, onChildOutput, &child);
    return true;
}

Child* childOf(Connection& c, ssh_channel channel)
{
    for (Child& child : c.children)
        if (child.channel == channel)
            return &child;
    return nullptr;
}

int onMessage(ssh_session, ssh_message m, void* userdata)
{
    auto& c = *static_cast<Connection*>(userdata);
    const int type = ssh_message_type(m);
    if (type == SSH_REQUEST_AUTH) {
        if (c.authenticated)
            return 1;
        onAuth(c, m);
        return 0;
    }
    if (!c.authenticated)
        return 1;
    if (type == SSH_REQUEST_CHANNEL_OPEN && ssh_message_subtype(m) == SSH_CHANNEL_SESSION) {
        ssh_channel channel = ssh_message_channel_request_open_reply_accept(m);
        if (!channel)
            return 1;
        Child& child = c.children.emplace_back();
        child.channel = channel;
        ssh_callbacks_init(&child.callbacks);
        child.callbacks.userdata = &child;
        child.callbacks.channel_data_function = onChannelData;
        child.callbacks.channel_eof_function = onChannelEof;
        child.callbacks.channel_close_function = onChannelClose;
        ssh_set_channel_callbacks(channel, &child.callbacks);
        return 0;
    }
    if (type == SSH_REQUEST_CHANNEL) {
        Child* child = childOf(c, ssh_message_channel_request_channel(m));
        if (!child || child->pid > 0)
            return 1;
        const int request = ssh_message_subtype(m);
        if (request == SSH_CHANNEL_REQUEST_ENV) {
            ssh_message_channel_request_reply_success(m);
            return 0;
        }
        if (request == SSH_CHANNEL_REQUEST_EXEC) {
            event("exec");
            if (!spawn(c, *child, nullptr, ssh_message_channel_request_command(m)))
                return 1;
            ssh_message_channel_request_reply_success(m);
            return 0;
        }
        if (request == SSH_CHANNEL_REQUEST_SUBSYSTEM
                && std::strcmp(ssh_message_channel_request_subsystem(m), "sftp") == 0) {
            event("subsystem sftp");
            if (!spawn(c, *child, g_options.sftpServer.c_str(), nullptr))
                return 1;
            ssh_message_channel_request_reply_success(m);
            return 0;
        }
    }
    return 1; // refused (a default reply)
}

void serve(ssh_session session)
{
    Connection c;
    c.session = session;
    if (ssh_pki_import_pubkey_file(g_options.authorizedKey.c_str(), &c.authorized) != SSH_OK) {
        event("cannot read %s", g_options.authorizedKey.c_str());
        return;
    }
    ssh_server_callbacks_struct callbacks{};
    ssh_callbacks_init(&callbacks);
    callbacks.userdata = &c;
    callbacks.auth_pubkey_function = onPubkey;
    ssh_set_server_callbacks(session, &callbacks);
    ssh_set_message_callback(session, onMessage, &c);
    if (ssh_handle_key_exchange(session) != SSH_OK) {
        event("key exchange failed: %s", ssh_get_error(session));
        return;
    }
    ssh_set_auth_methods(session, remainingMethods(c));
    c.loop = ssh_event_new();
    ssh_event_add_session(c.loop, session);
    for (;;) {
        if (ssh_event_dopoll(c.loop, 500) == SSH_ERROR)
            break;
        for (Child& child : c.children) {
            if (child.outDone && child.out >= 0) {
                ssh_event_remove_fd(c.loop, child.out);
                ::close(child.out);
                child.out = -1;
            }
            if (child.errDone && child.err >= 0) {
                ssh_event_remove_fd(c.loop, child.err);
                ::close(child.err);
                child.err = -1;
            }
            finishIfDone(child);
        }
        if (!ssh_is_connected(session) || (ssh_get_status(session) & (SSH_CLOSED | SSH_CLOSED_ERROR)))
            break;
    }
    event("connection ended");
    for (Child& child : c.children)
        if (child.in >= 0)
            ::close(child.in); // the agent exits at end-of-file, as under sshd
    ssh_event_free(c.loop);
    ssh_key_free(c.authorized);
}

bool parse(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : std::string(); };
        if (a == "--listen")
            g_options.listen = value();
        else if (a == "--port")
            g_options.port = std::atoi(value().c_str());
        else if (a == "--host-key")
            g_options.hostKey = value();
        else if (a == "--authorized-key")
            g_options.authorizedKey = value();
        else if (a == "--code")
            g_options.code = value();
        else if (a == "--methods")
            g_options.needPubkey = value() != "keyboard-interactive";
        else if (a == "--zero-rounds")
            g_options.zeroRounds = true;
        else if (a == "--two-prompts")
            g_options.twoPrompts = true;
        else if (a == "--reply-delay-ms")
            g_options.replyDelayMs = std::atoi(value().c_str());
        else if (a == "--sftp-server")
            g_options.sftpServer = value();
        else
            return false;
    }
    return !g_options.hostKey.empty() && !g_options.authorizedKey.empty() && !g_options.code.empty();
}

} // namespace

int main(int argc, char** argv)
{
    if (!parse(argc, argv)) {
        std::fprintf(stderr,
                "usage: %s --listen ADDR --host-key FILE --authorized-key FILE.pub --code CODE "
                "[--port N] [--methods M] [--zero-rounds] [--two-prompts] [--reply-delay-ms N] "
                "[--sftp-server PATH]\n",
                argv[0]);
        return 2;
    }
    ::signal(SIGPIPE, SIG_IGN);
    ssh_bind bind = ssh_bind_new();
    bool noConfig = false;
    ssh_bind_options_set(bind, SSH_BIND_OPTIONS_PROCESS_CONFIG, &noConfig); // never /etc/ssh/libssh_server_config
    ssh_bind_options_set(bind, SSH_BIND_OPTIONS_BINDADDR, g_options.listen.c_str());
    ssh_bind_options_set(bind, SSH_BIND_OPTIONS_BINDPORT, &g_options.port);
    ssh_bind_options_set(bind, SSH_BIND_OPTIONS_HOSTKEY, g_options.hostKey.c_str());
    if (ssh_bind_listen(bind) != SSH_OK) {
        std::fprintf(stderr, "kbdint-sshd: cannot listen: %s\n", ssh_get_error(bind));
        return 1;
    }
    sockaddr_in address{};
    socklen_t length = sizeof address;
    ::getsockname(ssh_bind_get_fd(bind), reinterpret_cast<sockaddr*>(&address), &length);
    std::printf("listening %d\n", int(ntohs(address.sin_port)));
    std::fflush(stdout);
    for (;;) {
        while (::waitpid(-1, nullptr, WNOHANG) > 0) { } // connections that ended
        ssh_session session = ssh_new();
        if (ssh_bind_accept(bind, session) != SSH_OK) {
            event("accept failed: %s", ssh_get_error(bind));
            ssh_free(session);
            continue;
        }
        const pid_t pid = ::fork();
        if (pid == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGTERM); // ends with the listener (the test's fixture)
            ::close(ssh_bind_get_fd(bind));     // the listener's socket stays the listener's
            serve(session);
            ssh_disconnect(session);
            ssh_free(session);
            ::_exit(0);
        }
        ssh_free(session); // the connection's process has it
    }
}
