#pragma once

// What OpenSSH's own client makes of the SSH configuration for one host, for
// the settings libssh 0.10 cannot give us:
//   - HashKnownHosts: libssh 0.10 does not parse it (it always writes plain
//     known_hosts entries);
//   - the identity files: libssh keeps a list, but its public API returns only
//     the first entry (ssh_options_get(SSH_OPTIONS_IDENTITY)), so its order
//     and content cannot be read back;
//   - IdentitiesOnly, CertificateFile and IdentityAgent as OpenSSH resolves
//     them (libssh 0.10 ignores the first two and cannot return the third);
//   - HostKeyAlias, which libssh 0.10 ignores, and StrictHostKeyChecking,
//     which it cannot return.
//
// The source is `ssh -G HOST` (OpenSSH >= 6.8), which prints every option as
// OpenSSH resolves it for that host: ~/.ssh/config then /etc/ssh/ssh_config
// (or only the -F file), first value wins, Host and Match blocks applied. A
// well-kept parser beats one of our own. Without the ssh client (or when it
// rejects the configuration) the caller falls back, see SshSession.

#include <QByteArray>
#include <QString>
#include <QStringList>

#include <optional>

namespace ty {

struct OpenSshHostConfig {
    bool hashKnownHosts = false;
    // In the order OpenSSH tries them: -i first, then the IdentityFile
    // entries, or OpenSSH's defaults when there are none. `~` and the
    // %-tokens OpenSSH expands in IdentityFile (%d %u %l %h %n %p %r %i %%)
    // are expanded; home is the password database's, as in OpenSSH.
    QStringList identityFiles;
    // IdentitiesOnly yes: of ssh-agent's keys only those of identityFiles
    // (or certificateFiles) are offered (SshAgentFilter.h).
    bool identitiesOnly = false;
    // CertificateFile entries, expanded as identityFiles.
    QStringList certificateFiles;
    // IdentityAgent as `ssh -G` prints it (`~` and %-tokens expanded by
    // OpenSSH): empty when not set, else a socket path, "none",
    // "SSH_AUTH_SOCK" or "$VARIABLE"; agentSocket() resolves it.
    QString identityAgent;

    // HostKeyAlias: the name the host key is looked up and stored under in
    // known_hosts instead of the host's; empty when not set. `ssh -G` gives
    // it lowercased, as ssh uses it.
    QString hostKeyAlias;
    // StrictHostKeyChecking as `ssh -G` prints it: "true", "false", "ask",
    // "accept-new"; empty without the line.
    QString strictHostKeyChecking;

    // The ssh-agent socket OpenSSH would use: IdentityAgent, else
    // $SSH_AUTH_SOCK; empty for none (IdentityAgent none, or no variable).
    QString agentSocket() const;
};

struct OpenSshQuery {
    QString host;         // alias or host name, as given to ssh
    QString configFile;   // empty: ~/.ssh/config + /etc/ssh/ssh_config; else `ssh -F configFile`
    QString user;         // empty: the config's (-l)
    int port = 0;         // 0: the config's (-p)
    QString identityFile; // empty: none (-i; OpenSSH drops one that does not exist)
};

// Runs `ssh [-F FILE] [-l USER] [-p PORT] [-i KEY] -G HOST` (at most 10 s).
// nullopt when the ssh client is missing or fails; *why (if given) says why.
// Blocking; any thread.
std::optional<OpenSshHostConfig> resolveOpenSshConfig(const OpenSshQuery& query, QString* why = nullptr);

// The home directory from the password database (not $HOME), as OpenSSH and
// libssh expand `~`; $HOME only when there is no entry.
QString passwdHomeDirectory();

// The settings out of `ssh -G` output. `home` and `localUser` expand `~`,
// %d and %u; `query` gives %n.
OpenSshHostConfig parseSshG(
        const QByteArray& output, const OpenSshQuery& query, const QString& home, const QString& localUser);

} // namespace ty
