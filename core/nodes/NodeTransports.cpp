#include "NodeTransports.h"

#include "SshAgentTransport.h"
#include "SshNodeOptions.h"

namespace ty {

std::unique_ptr<AgentTransport> transportForNode(const NodeRecord& node, const QString& localAgent,
        std::shared_ptr<SshPassphraseProvider> passphrases, const NodeConnectOptions& options)
{
    SshNodeOptions ssh = sshNodeOptionsFor(node, localAgent);
    ssh.acceptNewHostKey = options.acceptNewHostKey;
    if (options.connectTimeoutSec > 0)
        ssh.connectTimeoutSec = options.connectTimeoutSec;
    return std::make_unique<SshAgentTransport>(ssh, std::move(passphrases));
}

} // namespace ty
