<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>HelpDialogs</name>
    <message>
        <location filename="../ui/dialogs/HelpDialogs.cpp" line="66"/>
        <location filename="../ui/dialogs/HelpDialogs.cpp" line="70"/>
        <source>Keyboard shortcuts</source>
        <translation>键盘快捷键</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/HelpDialogs.cpp" line="71"/>
        <source>Action</source>
        <translation>操作</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/HelpDialogs.cpp" line="72"/>
        <source>Shortcut</source>
        <translation>快捷键</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/HelpDialogs.cpp" line="94"/>
        <source>&lt;h3&gt;Trainyard %1&lt;/h3&gt;&lt;p&gt;An experiment manager for machine-learning researchers: queue training runs on your GPU workstations over SSH, watch their consoles and curves live, and compare them.&lt;/p&gt;&lt;p&gt;Built with Qt %2 (running on Qt %3).&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Trainyard %1&lt;/h3&gt;&lt;p&gt;面向机器学习研究者的实验管理器：通过 SSH 在你的 GPU 工作站上排队训练运行，实时查看其控制台与曲线，并进行对比。&lt;/p&gt;&lt;p&gt;基于 Qt %2 构建（运行于 Qt %3）。&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/HelpDialogs.cpp" line="102"/>
        <source>About Trainyard</source>
        <translation>关于 Trainyard</translation>
    </message>
</context>
<context>
    <name>QObject</name>
    <message>
        <location filename="../ui/dialogs/PassphraseDialog.cpp" line="144"/>
        <source>Passphrase not remembered</source>
        <translation>未记住口令</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/PassphraseDialog.cpp" line="145"/>
        <source>The passphrase is used for this connection but could not be kept in the system keychain, and is not stored anywhere else.

%1</source>
        <translation>该口令已用于本次连接，但无法保存到系统密钥环，也未存储在其他任何地方。

%1</translation>
    </message>
</context>
<context>
    <name>RunTexts</name>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="13"/>
        <source>queued</source>
        <translation>排队中</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="14"/>
        <source>held</source>
        <translation>已挂起</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="15"/>
        <source>starting</source>
        <translation>启动中</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="16"/>
        <source>running</source>
        <translation>运行中</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="17"/>
        <source>succeeded</source>
        <translation>已成功</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="18"/>
        <source>failed</source>
        <translation>已失败</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="19"/>
        <location filename="../ui/i18n/RunTexts.cpp" line="32"/>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="20"/>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="24"/>
        <source>exit code</source>
        <translation>退出码</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="25"/>
        <source>signal</source>
        <translation>信号</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="26"/>
        <source>OOM killer</source>
        <translation>OOM killer 终止</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="27"/>
        <source>CUDA OOM</source>
        <translation>CUDA 显存不足</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="28"/>
        <source>traceback</source>
        <translation>Python 异常</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="29"/>
        <source>NCCL</source>
        <translation>NCCL 错误</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="30"/>
        <source>time limit</source>
        <translation>超出时限</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="31"/>
        <source>node lost</source>
        <translation>节点丢失</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="33"/>
        <source>start failed</source>
        <translation>启动失败</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="34"/>
        <source>unschedulable</source>
        <translation>无法调度</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="35"/>
        <source>other</source>
        <translation>其他</translation>
    </message>
    <message>
        <location filename="../ui/i18n/RunTexts.cpp" line="36"/>
        <source>preempted</source>
        <translation>被抢占</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <location filename="../app/gui/main.cpp" line="41"/>
        <source>Trainyard</source>
        <translation>Trainyard</translation>
    </message>
</context>
<context>
    <name>ty::AddNodeDialog</name>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="27"/>
        <source>Add node</source>
        <translation>添加节点</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="30"/>
        <source>ws-01</source>
        <translation>ws-01</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="33"/>
        <source>host alias from ~/.ssh/config, or a host name</source>
        <translation>~/.ssh/config 中的主机别名，或主机名</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="36"/>
        <source>from ~/.ssh/config, else your user name</source>
        <translation>取自 ~/.ssh/config，否则为你的用户名</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="40"/>
        <source>from ~/.ssh/config, else 22</source>
        <translation>取自 ~/.ssh/config，否则为 22</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="43"/>
        <source>Identity file</source>
        <translation>身份密钥文件</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="44"/>
        <source>ssh-agent, then ~/.ssh/config&apos;s IdentityFile</source>
        <translation>ssh-agent，然后是 ~/.ssh/config 中的 IdentityFile</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="45"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="48"/>
        <source>Private key</source>
        <translation>私钥</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="57"/>
        <source>Node lost after</source>
        <translation>节点失联判定时间</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="58"/>
        <source>the service&apos;s (10m unless set)</source>
        <translation>服务的设置（未设置时为 10m）</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="59"/>
        <source>How long the node may be silent before its runs count as lost and are retried elsewhere (90s, 30m, 2h). Until then they are unknown: a node that answers again gives their real endings.</source>
        <translation>节点无响应多久后，其上的运行才算丢失并在别处重试（如 90s、30m、2h）。在此之前它们的状态为未知：节点再次响应时会给出它们真实的结束情况。</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="62"/>
        <source>Accept the host key if the host is not in known_hosts yet</source>
        <translation>若主机尚不在 known_hosts 中，则接受其主机密钥</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="64"/>
        <source>Unchecked: an unknown host key is shown with its SHA256 fingerprint and you are asked. A changed host key is always refused.</source>
        <translation>不勾选：未知的主机密钥会显示其 SHA256 指纹并询问你。已变更的主机密钥总是被拒绝。</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="69"/>
        <source>Workstation (Trainyard places runs on its GPUs)</source>
        <translation>工作站（由 Trainyard 把运行放到它的 GPU 上）</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="70"/>
        <source>Slurm cluster login node (Slurm places runs)</source>
        <translation>Slurm 集群登录节点（由 Slurm 安排运行）</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="71"/>
        <source>A Slurm login node: runs go to Slurm as batch jobs (sbatch); Slurm picks their nodes and GPUs, and Trainyard follows them.</source>
        <translation>Slurm 登录节点：运行以批处理作业（sbatch）交给 Slurm；由 Slurm 选择节点和 GPU，Trainyard 跟踪它们。</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="75"/>
        <source>&amp;Kind:</source>
        <translation>类型(&amp;K)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="76"/>
        <source>&amp;Name:</source>
        <translation>名称(&amp;N)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="77"/>
        <source>&amp;Host:</source>
        <translation>主机(&amp;H)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="78"/>
        <source>&amp;User:</source>
        <translation>用户(&amp;U)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="79"/>
        <source>&amp;Port:</source>
        <translation>端口(&amp;P)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="80"/>
        <source>&amp;Identity file:</source>
        <translation>身份文件(&amp;I)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="81"/>
        <source>Node &amp;lost after:</source>
        <translation>节点失联判定时间(&amp;L)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="89"/>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="154"/>
        <source>Give the node a name.</source>
        <translation>请为节点命名。</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="156"/>
        <source>The name &apos;%1&apos; may only hold letters, digits, &apos;.&apos;, &apos;_&apos; and &apos;-&apos; (at most 64).</source>
        <translation>名称“%1”只能包含字母、数字、“.”、“_”和“-”（最多 64 个字符）。</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="158"/>
        <source>There is a node named &apos;%1&apos; already.</source>
        <translation>已存在名为“%1”的节点。</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="160"/>
        <source>Give the host: an alias from ~/.ssh/config or a host name.</source>
        <translation>请填写主机：~/.ssh/config 中的别名或主机名。</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="162"/>
        <source>The host &apos;%1&apos; contains a space.</source>
        <translation>主机“%1”包含空格。</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/AddNodeDialog.cpp" line="164"/>
        <source>&apos;%1&apos; is not a duration: write it as 90s, 30m or 2h.</source>
        <translation>“%1”不是时长：请写成 90s、30m 或 2h。</translation>
    </message>
</context>
<context>
    <name>ty::AggregatedConsoleModel</name>
    <message>
        <location filename="../ui/console/AggregatedConsoleModel.cpp" line="91"/>
        <source>%1 at offset %2</source>
        <translation>%1，位于偏移 %2</translation>
    </message>
</context>
<context>
    <name>ty::AggregatedConsoleView</name>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="106"/>
        <source>Filter lines</source>
        <translation>筛选行</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="107"/>
        <source>Filter lines (text, or a regex)</source>
        <translation>过滤行（文本或正则表达式）</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="110"/>
        <source>Plain text matches case-insensitively; a regex as typed (start it with (?i) to ignore case)</source>
        <translation>纯文本匹配不区分大小写；正则表达式按输入匹配（以 (?i) 开头可忽略大小写）</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="111"/>
        <source>Regex</source>
        <translation>正则</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="115"/>
        <source>Level</source>
        <translation>级别</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="116"/>
        <source>All levels</source>
        <translation>所有级别</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="117"/>
        <source>Warnings and errors</source>
        <translation>警告与错误</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="118"/>
        <source>Errors and tracebacks</source>
        <translation>错误与回溯</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="119"/>
        <source>Written to stderr</source>
        <translation>仅 stderr 输出</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="126"/>
        <source>Saved filters</source>
        <translation>已保存的筛选</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="130"/>
        <source>Save…</source>
        <translation>保存…</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="131"/>
        <source>Save the current filter under a name</source>
        <translation>以名称保存当前过滤器</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="134"/>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="135"/>
        <source>Delete the saved filter picked on the left</source>
        <translation>删除左侧选中的已保存过滤器</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="138"/>
        <source>Follow</source>
        <translation>跟随</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="141"/>
        <source>Keep the newest line in view</source>
        <translation>保持最新一行可见</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="157"/>
        <source>Merged console lines</source>
        <translation>合并的控制台行</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="168"/>
        <source>Copy lines</source>
        <translation>复制行</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="336"/>
        <source>%1 of %2 lines · %3 runs</source>
        <translation>%1 / %2 行 · %3 个运行</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="338"/>
        <source>loading %1 of %2 MB…</source>
        <translation>正在加载 %1 / %2 MB…</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="342"/>
        <source>filtering…</source>
        <translation>正在过滤…</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="347"/>
        <source>times estimated from start/end for: %1</source>
        <translation>根据开始/结束时间估计时间戳：%1</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="357"/>
        <source>Invalid regex: %1</source>
        <translation>无效的正则表达式：%1</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="443"/>
        <source>Saved filters…</source>
        <translation>已保存的过滤器…</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="446"/>
        <source>errors</source>
        <translation>错误</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="447"/>
        <source>warnings and errors</source>
        <translation>警告与错误</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="448"/>
        <source>stderr</source>
        <translation>stderr</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="449"/>
        <source>all levels</source>
        <translation>所有级别</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="452"/>
        <source>%1 “%2”, %3</source>
        <translation>%1“%2”，%3</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="452"/>
        <source>regex</source>
        <translation>正则</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="452"/>
        <source>text</source>
        <translation>文本</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="462"/>
        <source>Save filter</source>
        <translation>保存过滤器</translation>
    </message>
    <message>
        <location filename="../ui/console/AggregatedConsoleView.cpp" line="462"/>
        <source>Name:</source>
        <translation>名称：</translation>
    </message>
</context>
<context>
    <name>ty::ArtifactsDialog</name>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="31"/>
        <source>Artifacts of run %1 (%2)</source>
        <translation>运行 %1（%2）的产物</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="36"/>
        <source>Artifacts</source>
        <translation>产物</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="37"/>
        <source>File on the node</source>
        <translation>节点上的文件</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="37"/>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="37"/>
        <source>Type</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="50"/>
        <source>&amp;Refresh</source>
        <translation>刷新(&amp;R)</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="51"/>
        <source>&amp;Download to results folder</source>
        <translation>下载到结果文件夹(&amp;D)</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="54"/>
        <source>Download &amp;to…</source>
        <translation>下载到(&amp;T)…</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="55"/>
        <source>&amp;Open folder</source>
        <translation>打开文件夹(&amp;O)</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="62"/>
        <source>Download artifacts to</source>
        <translation>将产物下载到</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="104"/>
        <source>No engine: artifacts are listed by the run&apos;s node.</source>
        <translation>无引擎：产物由运行所在节点列出。</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="107"/>
        <source>Asking the node…</source>
        <translation>正在询问节点…</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="130"/>
        <source>link to %1</source>
        <translation>链接到 %1</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="142"/>
        <source>No files match the run&apos;s artifacts globs (or the spec has none).</source>
        <translation>没有与该运行的产物通配模式匹配的文件（或任务规格中未设置）。</translation>
    </message>
    <message numerus="yes">
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="143"/>
        <source>%n file(s), %1 on the node.</source>
        <translation>
            <numerusform>%n 个文件，节点上共 %1。</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="145"/>
        <source>The node stopped listing at its entry limit: not every match is shown.</source>
        <translation>节点在达到条目上限时停止列出：并非所有匹配项都已显示。</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="156"/>
        <source>Downloading to %1…</source>
        <translation>正在下载到 %1…</translation>
    </message>
    <message numerus="yes">
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="176"/>
        <source>Downloaded %n file(s) to %1.</source>
        <translation>
            <numerusform>已下载 %n 个文件到 %1。</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../ui/dialogs/ArtifactsDialog.cpp" line="178"/>
        <source>Refused (not written): %1</source>
        <translation>已拒绝（未写入）：%1</translation>
    </message>
</context>
<context>
    <name>ty::AttemptsStrip</name>
    <message>
        <location filename="../ui/runs/AttemptsStrip.cpp" line="46"/>
        <source> on %1</source>
        <translation>，在 %1 上</translation>
    </message>
    <message>
        <location filename="../ui/runs/AttemptsStrip.cpp" line="51"/>
        <source>, not before %1</source>
        <translation>，不早于 %1</translation>
    </message>
    <message>
        <location filename="../ui/runs/AttemptsStrip.cpp" line="58"/>
        <source>Attempt %1 of %2:</source>
        <translation>第 %1 次尝试（共 %2 次）：</translation>
    </message>
</context>
<context>
    <name>ty::CacheDialog</name>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="48"/>
        <source>Memoization cache</source>
        <translation>记忆化缓存</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="51"/>
        <source>Cache entries</source>
        <translation>缓存条目</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="54"/>
        <source>Pipeline</source>
        <translation>流水线</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="54"/>
        <source>Step</source>
        <translation>步骤</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="54"/>
        <source>Key</source>
        <translation>键</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="54"/>
        <source>Made</source>
        <translation>创建于</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="54"/>
        <source>Hits</source>
        <translation>命中</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="54"/>
        <source>Last hit</source>
        <translation>最近命中</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="54"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="54"/>
        <source>Outputs</source>
        <translation>输出</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="61"/>
        <source>Cache entry details</source>
        <translation>缓存条目详情</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="69"/>
        <source>Invalidate entry</source>
        <translation>使条目失效</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="71"/>
        <source>Forget this result: the step runs again the next time</source>
        <translation>忘记此结果：下次该步骤将重新运行</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="72"/>
        <source>Invalidate step</source>
        <translation>使步骤失效</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="74"/>
        <source>Forget every result of this step of this pipeline</source>
        <translation>忘记此流水线中该步骤的所有结果</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="75"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="101"/>
        <source>entry %1</source>
        <translation>条目 %1</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="110"/>
        <source>every entry of step %1 of %2</source>
        <translation>%2 中步骤 %1 的所有条目</translation>
    </message>
    <message numerus="yes">
        <location filename="../ui/pipelines/CacheDialog.cpp" line="140"/>
        <source>%n file(s), %1</source>
        <translation>
            <numerusform>%n 个文件，%1</numerusform>
        </translation>
    </message>
    <message numerus="yes">
        <location filename="../ui/pipelines/CacheDialog.cpp" line="146"/>
        <source>%n entr(ies), their outputs %1 in all</source>
        <translation>
            <numerusform>%n 个条目，其输出共 %1</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="159"/>
        <source>Select an entry to see what its key is made of.</source>
        <translation>选择一个条目以查看其键的构成。</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="164"/>
        <source>The entry %1 is gone.</source>
        <translation>条目 %1 已不存在。</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="165"/>
        <source>Cannot read the entry %1: %2</source>
        <translation>无法读取条目 %1：%2</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="169"/>
        <source>Key %1</source>
        <translation>键 %1</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="174"/>
        <source>Latest run of step %1: run %2</source>
        <translation>步骤 %1 的最近一次运行：运行 %2</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="176"/>
        <source>(not memoized, or run before memoization)</source>
        <translation>（未记忆化，或运行于启用记忆化之前）</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="184"/>
        <source>Invalidating %1…</source>
        <translation>正在使 %1 失效…</translation>
    </message>
    <message numerus="yes">
        <location filename="../ui/pipelines/CacheDialog.cpp" line="192"/>
        <source>Invalidated %1: %n entr(ies) removed; the step runs again the next time.</source>
        <translation>
            <numerusform>已使 %1 失效：移除了 %n 个条目；下次该步骤将重新运行。</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../ui/pipelines/CacheDialog.cpp" line="196"/>
        <source>Could not invalidate %1: %2</source>
        <translation>无法使 %1 失效：%2</translation>
    </message>
</context>
<context>
    <name>ty::CompareTableModel</name>
    <message>
        <location filename="../ui/compare/CompareTableModel.cpp" line="256"/>
        <source>name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareTableModel.cpp" line="257"/>
        <source>state</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareTableModel.cpp" line="304"/>
        <source>%1 · last</source>
        <translation>%1 · 最新</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareTableModel.cpp" line="306"/>
        <source>%1 · best (%2%3)</source>
        <translation>%1 · 最佳（%2%3）</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareTableModel.cpp" line="307"/>
        <source>min</source>
        <translation>最小</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareTableModel.cpp" line="307"/>
        <source>max</source>
        <translation>最大</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareTableModel.cpp" line="308"/>
        <source>, set</source>
        <translation>，手动设置</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareTableModel.cpp" line="310"/>
        <source>%1 · step of best</source>
        <translation>%1 · 最佳值所在步</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareTableModel.cpp" line="383"/>
        <source>Click to sort the runs by this row; right click to choose whether the lowest or highest value is best</source>
        <translation>点击按此行对运行排序；右键选择最低值还是最高值为最佳</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareTableModel.cpp" line="384"/>
        <source>Click to sort the runs by this row</source>
        <translation>点击按此行对运行排序</translation>
    </message>
</context>
<context>
    <name>ty::CompareView</name>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="93"/>
        <source>X axis:</source>
        <translation>X 轴：</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="96"/>
        <source>X axis</source>
        <translation>X 轴</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="97"/>
        <source>Step</source>
        <translation>步</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="97"/>
        <source>Epoch</source>
        <translation>轮次</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="97"/>
        <source>Relative time</source>
        <translation>相对时间</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="97"/>
        <source>Wall time</source>
        <translation>墙钟时间</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="101"/>
        <source>Log Y</source>
        <translation>对数 Y</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="103"/>
        <source>Logarithmic y axis; values &lt;= 0 are skipped</source>
        <translation>对数 y 轴；跳过 &lt;= 0 的值</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="108"/>
        <source>Smoothing:</source>
        <translation>平滑：</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="117"/>
        <source>Only differences</source>
        <translation>仅显示差异</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="121"/>
        <source>Export table…</source>
        <translation>导出表格…</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="125"/>
        <source>Export table as CSV</source>
        <translation>将表格导出为 CSV</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="125"/>
        <location filename="../ui/compare/CompareView.cpp" line="662"/>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="129"/>
        <location filename="../ui/compare/CompareView.cpp" line="673"/>
        <source>Export failed</source>
        <translation>导出失败</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="151"/>
        <source>Compared runs</source>
        <translation>参与对比的运行</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="159"/>
        <source>Comparison table</source>
        <translation>对比表</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="211"/>
        <source>Select runs in the table and press Ctrl+D to compare them.</source>
        <translation>在表格中选择运行并按 Ctrl+D 进行对比。</translation>
    </message>
    <message numerus="yes">
        <location filename="../ui/compare/CompareView.cpp" line="219"/>
        <source>Loading %n run(s)…</source>
        <translation>
            <numerusform>正在加载 %n 个运行…</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="308"/>
        <source>%1 runs · %2 keys · %3 points</source>
        <translation>%1 个运行 · %2 个键 · %3 个点</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="462"/>
        <source>Not drawn on the epoch axis (no &apos;epoch&apos; metric logged): %1</source>
        <translation>未在轮次轴上绘制（未记录 “epoch” 指标）：%1</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="510"/>
        <source>Sort runs ascending</source>
        <translation>运行升序排列</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="511"/>
        <source>Sort runs descending</source>
        <translation>运行降序排列</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="512"/>
        <source>Compared order</source>
        <translation>对比顺序</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="525"/>
        <source>Best of %1: automatic (%2)</source>
        <translation>%1 的最佳值：自动（%2）</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="525"/>
        <source>lowest</source>
        <translation>最低</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="525"/>
        <source>highest</source>
        <translation>最高</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="526"/>
        <source>Best of %1: lowest</source>
        <translation>%1 的最佳值：最低</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="527"/>
        <source>Best of %1: highest</source>
        <translation>%1 的最佳值：最高</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="642"/>
        <source>Reset zoom</source>
        <translation>重置缩放</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="643"/>
        <source>Export data as CSV…</source>
        <translation>将数据导出为 CSV…</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="644"/>
        <source>Export chart as PNG…</source>
        <translation>将图表导出为 PNG…</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="645"/>
        <source>Export chart as SVG…</source>
        <translation>将图表导出为 SVG…</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="663"/>
        <source>PNG images (*.png)</source>
        <translation>PNG 图像 (*.png)</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="664"/>
        <source>SVG images (*.svg)</source>
        <translation>SVG 图像 (*.svg)</translation>
    </message>
    <message>
        <location filename="../ui/compare/CompareView.cpp" line="666"/>
        <source>Export %1 as %2</source>
        <translation>将 %1 导出为 %2</translation>
    </message>
</context>
<context>
    <name>ty::ConsoleTextView</name>
    <message>
        <location filename="../ui/console/ConsoleTextView.cpp" line="105"/>
        <source>Console output</source>
        <translation>控制台输出</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleTextView.cpp" line="264"/>
        <source>  … [line truncated: %L1 of %L2 columns shown]</source>
        <translation>  … [行已截断：显示 %L2 列中的 %L1 列]</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleTextView.cpp" line="688"/>
        <source>&amp;Copy</source>
        <translation>复制(&amp;C)</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleTextView.cpp" line="691"/>
        <source>Select &amp;All</source>
        <translation>全选(&amp;A)</translation>
    </message>
</context>
<context>
    <name>ty::ConsoleView</name>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="41"/>
        <source>Find</source>
        <translation>查找</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="42"/>
        <source>Find in the console (Ctrl+F)</source>
        <translation>在控制台中查找 (Ctrl+F)</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="45"/>
        <source>Follow</source>
        <translation>跟随</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="46"/>
        <source>Keep the newest output in view (scroll up to stop)</source>
        <translation>保持最新输出可见（向上滚动可停止）</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="62"/>
        <location filename="../ui/console/ConsoleView.cpp" line="63"/>
        <source>Find in console</source>
        <translation>在控制台中查找</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="67"/>
        <source>Previous</source>
        <translation>上一个</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="70"/>
        <source>Next</source>
        <translation>下一个</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="75"/>
        <source>Close (Esc)</source>
        <translation>关闭 (Esc)</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="76"/>
        <source>Find:</source>
        <translation>查找：</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="88"/>
        <source>The run&apos;s colour, as in the runs table and the charts</source>
        <translation>该运行的颜色，与运行表格和图表中一致</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="101"/>
        <source>Find in the console</source>
        <translation>在控制台中查找</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="105"/>
        <source>Find the next match in the console</source>
        <translation>查找控制台中的下一个匹配</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="109"/>
        <source>Find the previous match in the console</source>
        <translation>查找控制台中的上一个匹配</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="142"/>
        <source>Select a run to see its console.</source>
        <translation>选择一个运行以查看其控制台。</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="160"/>
        <source>Waiting for output…</source>
        <translation>正在等待输出…</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="160"/>
        <source>No output.</source>
        <translation>无输出。</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="165"/>
        <source>Reading %1 of output…</source>
        <translation>正在读取 %1 的输出…</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="328"/>
        <location filename="../ui/console/ConsoleView.cpp" line="342"/>
        <source>not found</source>
        <translation>未找到</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="342"/>
        <source>%L1 match(es)</source>
        <translation>%L1 个匹配</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="365"/>
        <source>Run #%1 · %2 KiB</source>
        <translation>运行 #%1 · %2 KiB</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="366"/>
        <source>Run #%1 · %2 MiB</source>
        <translation>运行 #%1 · %2 MiB</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="371"/>
        <source>the first %1 MB</source>
        <translation>前 %1 MB</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="373"/>
        <source>%L1 rows</source>
        <translation>%L1 行</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="375"/>
        <source> · not held here: %1 (the console file has everything)</source>
        <translation> · 此处未保留：%1（控制台文件包含全部内容）</translation>
    </message>
    <message>
        <location filename="../ui/console/ConsoleView.cpp" line="375"/>
        <source> and then </source>
        <translation>，然后 </translation>
    </message>
</context>
<context>
    <name>ty::DecimatedChart</name>
    <message>
        <location filename="../ui/charts/DecimatedChart.cpp" line="153"/>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <location filename="../ui/charts/DecimatedChart.cpp" line="177"/>
        <source>Chart of %1</source>
        <translation>%1 的图表</translation>
    </message>
    <message>
        <location filename="../ui/charts/DecimatedChart.cpp" line="755"/>
        <source>Log scale: 1 value &lt;= 0 skipped</source>
        <translation>对数刻度：跳过 1 个 &lt;= 0 的值</translation>
    </message>
    <message>
        <location filename="../ui/charts/DecimatedChart.cpp" line="756"/>
        <source>Log scale: %1 values &lt;= 0 skipped</source>
        <translation>对数刻度：跳过 %1 个 &lt;= 0 的值</translation>
    </message>
    <message>
        <location filename="../ui/charts/DecimatedChart.cpp" line="781"/>
        <source>Trainyard chart</source>
        <translation>Trainyard 图表</translation>
    </message>
</context>
<context>
    <name>ty::LoginQuestionsDialog</name>
    <message>
        <location filename="../ui/dialogs/LoginQuestionsDialog.cpp" line="31"/>
        <source>SSH login to %1</source>
        <translation>SSH 登录 %1</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/LoginQuestionsDialog.cpp" line="33"/>
        <source>The login to node %1 asks for more than a key (keyboard-interactive authentication, e.g. a one-time code):</source>
        <translation>登录节点 %1 除密钥外还需回答问题（键盘交互式认证，例如一次性验证码）：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/LoginQuestionsDialog.cpp" line="61"/>
        <source>Answer %1</source>
        <translation>回答 %1</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/LoginQuestionsDialog.cpp" line="68"/>
        <source>&lt;small&gt;Trainyard hands the answers to libssh for this login and keeps them nowhere. A connection made later asks again.&lt;/small&gt;</source>
        <translation>&lt;small&gt;Trainyard 仅将这些回答交给 libssh 用于本次登录，不会保存在任何地方。之后建立的连接会再次询问。&lt;/small&gt;</translation>
    </message>
</context>
<context>
    <name>ty::MainWindow</name>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="118"/>
        <source>signal %1</source>
        <translation>信号 %1</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="120"/>
        <source>exit %1</source>
        <translation>退出码 %1</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="185"/>
        <source>Database write failed: %1</source>
        <translation>数据库写入失败：%1</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="192"/>
        <source>Damaged result database</source>
        <translation>结果数据库已损坏</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="242"/>
        <source>&amp;Submit…</source>
        <translation>提交(&amp;S)…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="245"/>
        <source>Submit a run (Ctrl+N); or drop a script, folder or job spec on the window</source>
        <translation>提交一个运行 (Ctrl+N)；或将脚本、文件夹或任务规格拖放到窗口上</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="248"/>
        <source>&amp;Open spec or script…</source>
        <translation>打开任务规格或脚本(&amp;O)…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="252"/>
        <source>Open job spec or script</source>
        <translation>打开任务规格或脚本</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="253"/>
        <source>Job specs and scripts (*.yaml *.yml *.py *.sh);;All files (*)</source>
        <translation>任务规格与脚本 (*.yaml *.yml *.py *.sh);;所有文件 (*)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="261"/>
        <source>&amp;Cancel run…</source>
        <translation>取消运行(&amp;C)…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="264"/>
        <source>Stop the selected runs (Ctrl+K; asks first for a running run): SIGTERM to its processes, SIGKILL after 10 s; a waiting run leaves the queue</source>
        <translation>停止选中的运行（Ctrl+K；正在运行的运行会先询问）：向其进程发送 SIGTERM，10 秒后发送 SIGKILL；等待中的运行将离开队列</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="268"/>
        <source>&amp;Delete run…</source>
        <translation>删除运行(&amp;D)…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="271"/>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1050"/>
        <source>Delete the selected finished run with its metrics and console copy</source>
        <translation>删除选中的已结束运行及其指标和控制台副本</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="274"/>
        <source>Co&amp;mpare</source>
        <translation>对比(&amp;M)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="278"/>
        <source>Compare the selected runs side by side (Ctrl+D; Ctrl/Shift+click to select several)</source>
        <translation>并排对比选中的运行（Ctrl+D；按住 Ctrl/Shift 点击可多选）</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="281"/>
        <source>&amp;Artifacts…</source>
        <translation>产物(&amp;A)…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="283"/>
        <source>List the selected run&apos;s artifacts on its node and download them</source>
        <translation>在节点上列出选中运行的产物并下载</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="289"/>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="293"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="305"/>
        <source>Re-run #%1 %2</source>
        <translation>重新运行 #%1 %2</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="312"/>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1366"/>
        <source>&amp;Run</source>
        <translation>运行(&amp;R)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="325"/>
        <source>&amp;Aggregated console</source>
        <translation>聚合控制台(&amp;A)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="328"/>
        <source>The selected runs&apos; consoles merged by arrival time, filterable (Ctrl+L)</source>
        <translation>选中运行的控制台按到达时间合并，可过滤 (Ctrl+L)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="332"/>
        <source>Main</source>
        <translation>主工具栏</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="358"/>
        <source>Runs</source>
        <translation>运行列表</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="419"/>
        <source>Run details</source>
        <translation>运行详情</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="424"/>
        <source>Console</source>
        <translation>控制台</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="425"/>
        <source>Metrics</source>
        <translation>指标</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="433"/>
        <source>Compare</source>
        <translation>对比</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="438"/>
        <source>Notices of the run</source>
        <translation>运行的提示</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="497"/>
        <source>local: connecting…</source>
        <translation>本地：正在连接…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="497"/>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="503"/>
        <source>no engine</source>
        <translation>无引擎</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="520"/>
        <source>Node %1: %2</source>
        <translation>节点 %1：%2</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="523"/>
        <source>Run #%1 was not cancelled: %2</source>
        <translation>运行 #%1 未被取消：%2</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="527"/>
        <source>Reconnected to the Trainyard service</source>
        <translation>已重新连接到 Trainyard 服务</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="638"/>
        <source>Nothing to open</source>
        <translation>没有可打开的内容</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="638"/>
        <source>Drop job specs (.yaml), scripts (.py, .sh) or folders here.</source>
        <translation>将任务规格（.yaml）、脚本（.py、.sh）或文件夹拖放到此处。</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="653"/>
        <source>%1: only local files and folders can be opened</source>
        <translation>%1：只能打开本地文件和文件夹</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="659"/>
        <source>%1: no such file or folder</source>
        <translation>%1：没有该文件或文件夹</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="675"/>
        <source>%1: only .py and .sh scripts, folders and .yaml job specs can be submitted</source>
        <translation>%1：只能提交 .py 和 .sh 脚本、文件夹以及 .yaml 任务规格</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="679"/>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="719"/>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="723"/>
        <source>Cannot open</source>
        <translation>无法打开</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="719"/>
        <source>%1: cannot read job spec: %2</source>
        <translation>%1：无法读取任务规格：%2</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="723"/>
        <source>%1: a job spec larger than 1 MiB is not a job spec</source>
        <translation>%1：大于 1 MiB 的任务规格不是任务规格</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="729"/>
        <source>Submit %1</source>
        <translation>提交 %1</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="736"/>
        <source>Cannot submit &apos;%1&apos;: no run engine.</source>
        <translation>无法提交“%1”：没有运行引擎。</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="737"/>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="760"/>
        <source>Submit failed</source>
        <translation>提交失败</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="741"/>
        <source>Submitting %1…</source>
        <translation>正在提交 %1…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="749"/>
        <source>Submitted %1 as run #%2</source>
        <translation>已将 %1 提交为运行 #%2</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="750"/>
        <source>Submitted %1: %2 runs, #%3 to #%4</source>
        <translation>已提交 %1：%2 个运行，#%3 至 #%4</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="759"/>
        <source>&apos;%1&apos; made no runs</source>
        <translation>“%1”未生成任何运行</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="829"/>
        <source>%1 runs · %2 running · %3 queued</source>
        <translation>%1 个运行 · %2 个运行中 · %3 个排队中</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="835"/>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="883"/>
        <source>Select a run to see its console.</source>
        <translation>选择一个运行以查看其控制台。</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="836"/>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="884"/>
        <source>Select a run to see its metrics.</source>
        <translation>选择一个运行以查看其指标。</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="891"/>
        <source>Loading metrics…</source>
        <translation>正在加载指标…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="920"/>
        <source>&lt;i&gt;No run selected — drop a training script, a folder or a job spec here, or press Ctrl+N.&lt;/i&gt;</source>
        <translation>&lt;i&gt;未选择运行——将训练脚本、文件夹或任务规格拖放到此处，或按 Ctrl+N。&lt;/i&gt;</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="931"/>
        <source>⚠ 1 notice</source>
        <translation>⚠ 1 条提示</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="931"/>
        <source>⚠ %1 notices</source>
        <translation>⚠ %1 条提示</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="938"/>
        <source>Run #%1 has notices:</source>
        <translation>运行 #%1 有提示：</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="939"/>
        <source>Click to show them in a window (text can be copied).</source>
        <translation>点击在窗口中显示（文本可复制）。</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="952"/>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="967"/>
        <source>(not placed)</source>
        <translation>（未放置）</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="956"/>
        <source>
tags: %1</source>
        <translation>
标签：%1</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="960"/>
        <source>
archived</source>
        <translation>
已归档</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="962"/>
        <source>
notes: %1</source>
        <translation>
备注：%1</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="964"/>
        <source>&lt;p style=&apos;white-space:pre-wrap&apos;&gt;%1 #%2 %3 on %4
%5
in %6%7&lt;/p&gt;</source>
        <translation>&lt;p style=&apos;white-space:pre-wrap&apos;&gt;%1 #%2 %3，位于 %4
%5
工作目录 %6%7&lt;/p&gt;</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="981"/>
        <source>Notices of %1 #%2</source>
        <translation>%1 #%2 的提示</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1018"/>
        <source>Damaged: %1</source>
        <translation>已损坏：%1</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1021"/>
        <source>Read-only: %1</source>
        <translation>只读：%1</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1022"/>
        <source>%1 is open read-only: %2. Its runs are shown as last recorded in it; nothing can be submitted, cancelled, renamed or deleted here.</source>
        <translation>%1 以只读方式打开：%2。其中的运行按最后记录的状态显示；此处无法提交、取消、重命名或删除任何内容。</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1030"/>
        <source>Trainyard — %1 (read-only)</source>
        <translation>Trainyard — %1（只读）</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1049"/>
        <source>Cancel the run first: only finished runs can be deleted</source>
        <translation>请先取消该运行：只有已结束的运行才能删除</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1079"/>
        <source>Aggregated console</source>
        <translation>聚合控制台</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1171"/>
        <source>No metrics yet. Lines like &apos;loss=0.31&apos;, &apos;val_acc: 0.9&apos; or JSON records become curves here.</source>
        <translation>暂无指标。形如 “loss=0.31”、“val_acc: 0.9” 的行或 JSON 记录会在此处成为曲线。</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1185"/>
        <source>ready</source>
        <translation>就绪</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1185"/>
        <source>not ready</source>
        <translation>未就绪</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1217"/>
        <source>Cancel the running run %1?
Its processes get SIGTERM, and SIGKILL after 10 s.</source>
        <translation>取消正在运行的运行 %1？
其进程将收到 SIGTERM，10 秒后收到 SIGKILL。</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1218"/>
        <source>Cancel %1 running runs?
%2
Their processes get SIGTERM, and SIGKILL after 10 s.</source>
        <translation>取消 %1 个正在运行的运行？
%2
其进程将收到 SIGTERM，10 秒后收到 SIGKILL。</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1221"/>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1223"/>
        <source>Cancel run</source>
        <translation>取消运行</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1225"/>
        <source>Keep running</source>
        <translation>继续运行</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1240"/>
        <source>Cancelling run #%1…</source>
        <translation>正在取消运行 #%1…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1240"/>
        <source>Cancelling %1 runs…</source>
        <translation>正在取消 %1 个运行…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1251"/>
        <source>Delete run</source>
        <translation>删除运行</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1252"/>
        <source>Delete run #%1 &apos;%2&apos; with its params, metrics and local console copy?
This cannot be undone.</source>
        <translation>删除运行 #%1“%2”及其参数、指标和本地控制台副本？
此操作无法撤销。</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1267"/>
        <source>Run #%1 &apos;%2&apos; was not deleted: %3</source>
        <translation>运行 #%1“%2”未被删除：%3</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1271"/>
        <source>Deleted run #%1 &apos;%2&apos;</source>
        <translation>已删除运行 #%1“%2”</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1284"/>
        <source>Pipelines</source>
        <translation>流水线</translation>
    </message>
    <message numerus="yes">
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1317"/>
        <source>%1: %n run(s)</source>
        <translation>
            <numerusform>%1：%n 个运行</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1347"/>
        <source>Queue</source>
        <translation>队列</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1350"/>
        <source>Nodes</source>
        <translation>节点</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1356"/>
        <source>Pools</source>
        <translation>资源池</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1379"/>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1386"/>
        <source>&amp;Reset layout</source>
        <translation>重置布局(&amp;R)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1389"/>
        <source>Queue, Nodes and Pools tabbed on the right, the runs table and its tabs at their default sizes</source>
        <translation>队列、节点和资源池以标签页停靠在右侧，运行表及其标签页恢复默认大小</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1397"/>
        <source>&amp;Tools</source>
        <translation>工具(&amp;T)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1398"/>
        <source>&amp;Settings…</source>
        <translation>设置(&amp;S)…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1402"/>
        <source>Theme, notifications and this database&apos;s scheduling policy (Ctrl+,)</source>
        <translation>主题、通知与此数据库的调度策略（Ctrl+,）</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1407"/>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1408"/>
        <source>&amp;Keyboard shortcuts</source>
        <translation>键盘快捷键(&amp;K)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/MainWindow.cpp" line="1413"/>
        <source>&amp;About Trainyard</source>
        <translation>关于 Trainyard(&amp;A)</translation>
    </message>
</context>
<context>
    <name>ty::MetricChartWidget</name>
    <message>
        <location filename="../ui/charts/MetricChartWidget.cpp" line="282"/>
        <source>No &apos;epoch&apos; metric logged: not drawn on the epoch axis.</source>
        <translation>未记录 “epoch” 指标：未在轮次轴上绘制。</translation>
    </message>
</context>
<context>
    <name>ty::MetricChartsPanel</name>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="36"/>
        <source>X axis:</source>
        <translation>X 轴：</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="39"/>
        <source>X axis</source>
        <translation>X 轴</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="46"/>
        <source>Log Y</source>
        <translation>对数 Y</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="48"/>
        <source>Logarithmic y axis; values &lt;= 0 are skipped</source>
        <translation>对数 y 轴；跳过 &lt;= 0 的值</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="53"/>
        <source>Smoothing:</source>
        <translation>平滑：</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="69"/>
        <source>Select a run to see its metrics.</source>
        <translation>选择一个运行以查看其指标。</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="249"/>
        <source>Reset zoom</source>
        <translation>重置缩放</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="250"/>
        <source>Export chart as PNG…</source>
        <translation>将图表导出为 PNG…</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="251"/>
        <source>Export chart as SVG…</source>
        <translation>将图表导出为 SVG…</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="265"/>
        <source>Export chart as SVG</source>
        <translation>将图表导出为 SVG</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="265"/>
        <source>Export chart as PNG</source>
        <translation>将图表导出为 PNG</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="267"/>
        <source>SVG images (*.svg)</source>
        <translation>SVG 图像 (*.svg)</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="267"/>
        <source>PNG images (*.png)</source>
        <translation>PNG 图像 (*.png)</translation>
    </message>
    <message>
        <location filename="../ui/charts/MetricChartsPanel.cpp" line="272"/>
        <source>Export failed</source>
        <translation>导出失败</translation>
    </message>
</context>
<context>
    <name>ty::NodesView</name>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="46"/>
        <source>&amp;Add node…</source>
        <translation>添加节点(&amp;A)…</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="48"/>
        <source>Add a GPU workstation reached over SSH (a host alias from ~/.ssh/config)</source>
        <translation>添加一台通过 SSH 访问的 GPU 工作站（~/.ssh/config 中的主机别名）</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="52"/>
        <source>Aggregated &amp;console</source>
        <translation>聚合控制台(&amp;C)</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="54"/>
        <source>The consoles of the selected node&apos;s latest runs, merged by arrival time</source>
        <translation>选中节点最近运行的控制台，按到达时间合并</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="70"/>
        <source>Nodes and their GPUs</source>
        <translation>节点及其 GPU</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="73"/>
        <source>Node / GPU</source>
        <translation>节点 / GPU</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="73"/>
        <source>Status</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="73"/>
        <source>Memory</source>
        <translation>显存</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="73"/>
        <source>Util</source>
        <translation>利用率</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="73"/>
        <source>Temp</source>
        <translation>温度</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="73"/>
        <source>Power</source>
        <translation>功耗</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="73"/>
        <source>Held by</source>
        <translation>占用者</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="105"/>
        <source>GPU status every 2 s.</source>
        <translation>每 2 秒更新 GPU 状态。</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="230"/>
        <source>GPU status every 2 s · last update %1</source>
        <translation>每 2 秒更新 GPU 状态 · 最近更新 %1</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="254"/>
        <source>no NVIDIA GPU (CPU node)</source>
        <translation>无 NVIDIA GPU（CPU 节点）</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="279"/>
        <source>pid %1</source>
        <translation>pid %1</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="285"/>
        <source>Trainyard run %1 of another database</source>
        <translation>另一个数据库的 Trainyard 运行 %1</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="286"/>
        <source>other process</source>
        <translation>其他进程</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="287"/>
        <source>other process (%1)</source>
        <translation>其他进程（%1）</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="297"/>
        <source>Slurm %1</source>
        <translation>Slurm %1</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="300"/>
        <source>Slurm cluster: partitions not reported yet</source>
        <translation>Slurm 集群：尚未报告分区</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="339"/>
        <source>partition %1 (default)</source>
        <translation>分区 %1（默认）</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="339"/>
        <source>partition %1</source>
        <translation>分区 %1</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="329"/>
        <source>no GPUs</source>
        <translation>无 GPU</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="326"/>
        <source>%1 CPUs, %2 GiB, %3 per node</source>
        <translation>每节点 %1 个 CPU、%2 GiB、%3</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="331"/>
        <source>no time limit</source>
        <translation>无时间限制</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="332"/>
        <source>time limit %1 min</source>
        <translation>时间限制 %1 分钟</translation>
    </message>
    <message numerus="yes">
        <location filename="../ui/nodes/NodesView.cpp" line="334"/>
        <source>%1 %2 · %n node(s) %3 · %4 · %5</source>
        <translation>
            <numerusform>%1 %2 · %n 个节点 %3 · %4 · %5</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="351"/>
        <source>connecting…</source>
        <translation>正在连接…</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="353"/>
        <source>reachable</source>
        <translation>可达</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="356"/>
        <source>unreachable</source>
        <translation>不可达</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="361"/>
        <source>this machine</source>
        <translation>本机</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="366"/>
        <source>
GPUs as of %1</source>
        <translation>
GPU 状态截至 %1</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="368"/>
        <source>labels: %1</source>
        <translation>标签：%1</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="390"/>
        <source>reading GPUs…</source>
        <translation>正在读取 GPU…</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="408"/>
        <source>free</source>
        <translation>空闲</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="408"/>
        <source>busy</source>
        <translation>忙碌</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="445"/>
        <location filename="../ui/nodes/NodesView.cpp" line="459"/>
        <source>Cannot add node</source>
        <translation>无法添加节点</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="445"/>
        <source>Cannot add node &apos;%1&apos;: no run engine.</source>
        <translation>无法添加节点“%1”：没有运行引擎。</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="446"/>
        <source>no run engine</source>
        <translation>没有运行引擎</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="484"/>
        <source>Host key of %1 refused</source>
        <translation>已拒绝 %1 的主机密钥</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="488"/>
        <source>Unknown host key</source>
        <translation>未知的主机密钥</translation>
    </message>
    <message>
        <location filename="../ui/nodes/NodesView.cpp" line="489"/>
        <source>The host key of node &apos;%1&apos; is not in known_hosts.

SHA256 fingerprint:
%2

Compare it with the host&apos;s own (ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub on it). Trust it and add it to known_hosts?</source>
        <translation>节点“%1”的主机密钥不在 known_hosts 中。

SHA256 指纹：
%2

请与该主机自身的指纹比对（在其上运行 ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub）。信任该密钥并将其加入 known_hosts？</translation>
    </message>
</context>
<context>
    <name>ty::PassphraseDialog</name>
    <message>
        <location filename="../ui/dialogs/PassphraseDialog.cpp" line="25"/>
        <source>SSH key passphrase for %1</source>
        <translation>%1 的 SSH 密钥口令</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/PassphraseDialog.cpp" line="26"/>
        <source>Connecting to node &lt;b&gt;%1&lt;/b&gt; needs an encrypted private key.&lt;br&gt;%2</source>
        <translation>连接节点 &lt;b&gt;%1&lt;/b&gt; 需要一个加密的私钥。&lt;br&gt;%2</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/PassphraseDialog.cpp" line="31"/>
        <source>&lt;small&gt;Trainyard hands the passphrase to libssh. It keeps it only in the system keychain, and only if you ask; never in a file.&lt;/small&gt;</source>
        <translation>&lt;small&gt;Trainyard 将口令交给 libssh。仅在你要求时才将其保存在系统密钥环中；绝不写入文件。&lt;/small&gt;</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/PassphraseDialog.cpp" line="37"/>
        <source>Passphrase</source>
        <translation>密码短语</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/PassphraseDialog.cpp" line="45"/>
        <source>Remember in the system keychain</source>
        <translation>记住到系统密钥环</translation>
    </message>
</context>
<context>
    <name>ty::PipelineGraph</name>
    <message>
        <location filename="../ui/pipelines/PipelineGraph.cpp" line="30"/>
        <source>Pipeline graph</source>
        <translation>流水线图</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelineGraph.cpp" line="72"/>
        <source>state: %1</source>
        <translation>状态：%1</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelineGraph.cpp" line="74"/>
        <source>run: #%1</source>
        <translation>运行：#%1</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelineGraph.cpp" line="76"/>
        <source>duration: %1</source>
        <translation>耗时：%1</translation>
    </message>
</context>
<context>
    <name>ty::PipelinesView</name>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="39"/>
        <source>Cancel pipeline</source>
        <translation>取消流水线</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="41"/>
        <source>Cancel its waiting steps and stop its running ones</source>
        <translation>取消其等待中的步骤，并停止正在运行的步骤</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="42"/>
        <source>Resume</source>
        <translation>恢复</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="44"/>
        <source>Run a failed or cancelled pipeline again, reusing the steps that succeeded</source>
        <translation>重新运行失败或已取消的流水线，复用已成功的步骤</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="46"/>
        <source>Cache…</source>
        <translation>缓存…</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="48"/>
        <source>Memoized steps: what is kept, why a step ran, and invalidating results</source>
        <translation>记忆化的步骤：保留了什么、步骤为何运行，以及使结果失效</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="53"/>
        <source>Pipelines</source>
        <translation>流水线</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="55"/>
        <source>#</source>
        <translation>#</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="55"/>
        <source>Pipeline</source>
        <translation>流水线</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="55"/>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="55"/>
        <source>Submitted</source>
        <translation>提交时间</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="67"/>
        <source>Pipeline graph</source>
        <translation>流水线图</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="93"/>
        <source>Pipeline %1: cancelling</source>
        <translation>流水线 %1：正在取消</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="94"/>
        <source>Cannot cancel pipeline %1: %2</source>
        <translation>无法取消流水线 %1：%2</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="103"/>
        <source>Cannot resume pipeline %1: %2</source>
        <translation>无法恢复流水线 %1：%2</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="106"/>
        <source>Pipeline %1 resumes pipeline %2</source>
        <translation>流水线 %1 恢复了流水线 %2</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="201"/>
        <source>No pipelines yet: drop a pipeline file (steps: ...) on the window, or trainyardctl pipeline submit FILE</source>
        <translation>还没有流水线：把流水线文件（steps: ...）拖到窗口上，或运行 trainyardctl pipeline submit FILE</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="203"/>
        <source>Select a pipeline</source>
        <translation>请选择一条流水线</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="206"/>
        <source>Pipeline %1 %2: %3</source>
        <translation>流水线 %1 %2：%3</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="210"/>
        <source> (resumes pipeline %1)</source>
        <translation>（恢复自流水线 %1）</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="265"/>
        <source>not connected to the Trainyard service</source>
        <translation>未连接到 Trainyard 服务</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="272"/>
        <source>Cannot submit pipeline %1: %2</source>
        <translation>无法提交流水线 %1：%2</translation>
    </message>
    <message>
        <location filename="../ui/pipelines/PipelinesView.cpp" line="275"/>
        <source>Submitted pipeline %1 (%2)</source>
        <translation>已提交流水线 %1（%2）</translation>
    </message>
</context>
<context>
    <name>ty::PoolsView</name>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="46"/>
        <source>Pool</source>
        <translation>资源池</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="46"/>
        <source>GPUs</source>
        <translation>GPU</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="46"/>
        <source>In use</source>
        <translation>自用</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="46"/>
        <source>Lent</source>
        <translation>借出</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="46"/>
        <source>Borrowed</source>
        <translation>借入</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="46"/>
        <source>Idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="46"/>
        <source>Quota</source>
        <translation>配额</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="47"/>
        <source>GPUs of the pool&apos;s nodes held by its own runs</source>
        <translation>本池节点上由本池运行占用的 GPU</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="48"/>
        <source>GPUs of the pool&apos;s nodes held by runs of other pools</source>
        <translation>本池节点上由其他池的运行占用的 GPU</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="49"/>
        <source>GPUs the pool&apos;s runs hold on other pools&apos; nodes</source>
        <translation>本池的运行在其他池节点上占用的 GPU</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="53"/>
        <source>Resource pools</source>
        <translation>资源池</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="213"/>
        <source>1 GPU</source>
        <translation>1 个 GPU</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="213"/>
        <source>%1 GPUs</source>
        <translation>%1 个 GPU</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="215"/>
        <source>%1, no limit</source>
        <translation>%1，无限额</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="216"/>
        <source>%1 of %2</source>
        <translation>%1 / %2</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="231"/>
        <source>every node not in an earlier pool</source>
        <translation>不属于前面任何池的所有节点</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="232"/>
        <source>labels %1</source>
        <translation>标签 %1</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="233"/>
        <source>no nodes</source>
        <translation>无节点</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="234"/>
        <source>nodes: %1 (%2)</source>
        <translation>节点：%1（%2）</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="235"/>
        <source>lends idle GPUs</source>
        <translation>借出空闲 GPU</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="235"/>
        <source>does not lend</source>
        <translation>不借出</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="237"/>
        <source>borrows up to %1</source>
        <translation>最多借入 %1</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="254"/>
        <source>(none)</source>
        <translation>（无）</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="255"/>
        <source>project %1</source>
        <translation>项目 %1</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="255"/>
        <source>user %1</source>
        <translation>用户 %1</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="261"/>
        <source>the pool&apos;s default limit</source>
        <translation>该池的默认限额</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="272"/>
        <source>run %1 %2: %3</source>
        <translation>运行 %1 %2：%3</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="274"/>
        <source>waiting</source>
        <translation>等待中</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="281"/>
        <source>and %1 more waiting runs</source>
        <translation>另有 %1 个等待中的运行</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="312"/>
        <source>No resource pools: define them under &quot;pools&quot; in %1 (see trainyardctl policy).</source>
        <translation>没有资源池：请在 %1 的 &quot;pools&quot; 下定义（参见 trainyardctl policy）。</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="315"/>
        <source>In no pool (free for all, no quota): %1</source>
        <translation>不属于任何池（所有人可用，无配额）：%1</translation>
    </message>
    <message>
        <location filename="../ui/queue/PoolsView.cpp" line="317"/>
        <source>Cannot read the policy file: %1</source>
        <translation>无法读取策略文件：%1</translation>
    </message>
</context>
<context>
    <name>ty::QueueActions</name>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="29"/>
        <source>&amp;Hold</source>
        <translation>挂起(&amp;H)</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="30"/>
        <source>Keep the selected queued runs from starting (they block no one)</source>
        <translation>阻止选中的排队运行启动（它们不会阻塞其他运行）</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="31"/>
        <source>&amp;Release</source>
        <translation>释放(&amp;R)</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="31"/>
        <source>Let the selected held runs start again</source>
        <translation>让选中的已挂起运行重新可以启动</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="32"/>
        <source>Move to &amp;top</source>
        <translation>移到顶部(&amp;T)</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="33"/>
        <source>Give the selected waiting runs a priority above every other waiting run</source>
        <translation>赋予选中的等待运行高于其他所有等待运行的优先级</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="34"/>
        <source>Set &amp;priority…</source>
        <translation>设置优先级(&amp;P)…</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="35"/>
        <source>Change the priority of the selected waiting runs</source>
        <translation>更改选中的等待运行的优先级</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="38"/>
        <source>Ca&amp;ncel</source>
        <translation>取消(&amp;N)</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="39"/>
        <source>Take the selected waiting runs out of the queue (recorded as cancelled)</source>
        <translation>将选中的等待运行移出队列（记录为已取消）</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="41"/>
        <source>Top</source>
        <translation>置顶</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="42"/>
        <source>Priority…</source>
        <translation>优先级…</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="143"/>
        <source>Set priority</source>
        <translation>设置优先级</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="144"/>
        <source>Priority of run #%1 (higher starts first under the priority policies):</source>
        <translation>运行 #%1 的优先级（在优先级类策略下，数值越高越先启动）：</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="146"/>
        <source>Priority of the %1 selected runs (higher starts first):</source>
        <translation>选中的 %1 个运行的优先级（数值越高越先启动）：</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="158"/>
        <source>cannot %1: no run engine</source>
        <translation>无法%1：没有运行引擎</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="187"/>
        <source>Cannot hold</source>
        <translation>无法挂起</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="188"/>
        <source>Cannot release</source>
        <translation>无法释放</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="189"/>
        <source>Cannot move to top</source>
        <translation>无法移到顶部</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="190"/>
        <source>Cannot set priority</source>
        <translation>无法设置优先级</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="191"/>
        <source>Cannot cancel</source>
        <translation>无法取消</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueActions.cpp" line="193"/>
        <source>Queue action failed</source>
        <translation>队列操作失败</translation>
    </message>
</context>
<context>
    <name>ty::QueueModel</name>
    <message>
        <location filename="../ui/queue/QueueModel.cpp" line="31"/>
        <source>held by user</source>
        <translation>被用户挂起</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueModel.cpp" line="32"/>
        <source>(not scheduled yet)</source>
        <translation>（尚未调度）</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueModel.cpp" line="78"/>
        <source>Position in the queue: the scheduler considers this run in place %1</source>
        <translation>队列中的位置：调度器将此运行排在第 %1 位</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueModel.cpp" line="84"/>
        <source>Run</source>
        <translation>运行</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueModel.cpp" line="85"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueModel.cpp" line="86"/>
        <source>Priority</source>
        <translation>优先级</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueModel.cpp" line="87"/>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueModel.cpp" line="88"/>
        <source>Why it waits</source>
        <translation>等待原因</translation>
    </message>
</context>
<context>
    <name>ty::QueueView</name>
    <message>
        <location filename="../ui/queue/QueueView.cpp" line="33"/>
        <source>Policy </source>
        <translation>策略 </translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueView.cpp" line="36"/>
        <source>Scheduling policy</source>
        <translation>调度策略</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueView.cpp" line="38"/>
        <source>Scheduling policy of this database&apos;s queue (%1).
fcfs: strict submission order · priority: higher first, with aging · sjf: shortest estimated runtime first
backfill: EASY backfill over priority · fair-share: Slurm&apos;s classic fair-share factor, with backfill</source>
        <translation>此数据库队列的调度策略（%1）。
fcfs：严格按提交顺序 · priority：优先级高者先，带老化 · sjf：估计运行时间最短者先
backfill：基于优先级的 EASY 回填 · fair-share：Slurm 经典公平共享因子，带回填</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueView.cpp" line="47"/>
        <source>Queue</source>
        <translation>队列</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueView.cpp" line="49"/>
        <source>(default)</source>
        <translation>（默认）</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueView.cpp" line="50"/>
        <source>The queue whose policy is shown: (default), or a job spec&apos;s queue: name</source>
        <translation>显示其策略的队列：（默认），或任务规格中 queue: 指定的队列</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueView.cpp" line="54"/>
        <source>Preemption</source>
        <translation>抢占</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueView.cpp" line="56"/>
        <source>Waiting runs of this queue may stop running runs of lower priority whose job spec says preemptible: true; those are requeued from their checkpoint</source>
        <translation>此队列中等待的运行可以停止优先级更低、且任务规格写明 preemptible: true 的正在运行的运行；被停止的运行会从其检查点重新排队</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueView.cpp" line="69"/>
        <source>Waiting runs</source>
        <translation>等待中的运行</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueView.cpp" line="117"/>
        <location filename="../ui/queue/QueueView.cpp" line="127"/>
        <source>Cannot change the policy</source>
        <translation>无法更改策略</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueView.cpp" line="272"/>
        <source>No runs waiting.</source>
        <translation>没有等待中的运行。</translation>
    </message>
    <message>
        <location filename="../ui/queue/QueueView.cpp" line="273"/>
        <source>%1 waiting (%2 held) · order: %3</source>
        <translation>%1 个等待中（%2 个已挂起）· 顺序：%3</translation>
    </message>
</context>
<context>
    <name>ty::RunActions</name>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="29"/>
        <source>Re&amp;name…</source>
        <translation>重命名(&amp;N)…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="29"/>
        <source>Give the selected run another name (F2)</source>
        <translation>为选中的运行另起名称 (F2)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="31"/>
        <source>Tags and &amp;notes…</source>
        <translation>标签与备注(&amp;N)…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="32"/>
        <source>Edit the selected run&apos;s tags and notes (Ctrl+E)</source>
        <translation>编辑选中运行的标签与备注 (Ctrl+E)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="33"/>
        <source>Re-r&amp;un…</source>
        <translation>重新运行(&amp;U)…</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="34"/>
        <source>Submit the selected run again with its params (Ctrl+R); the submit dialog opens to change them</source>
        <translation>使用相同参数再次提交选中的运行 (Ctrl+R)；提交对话框会打开以便修改</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="36"/>
        <source>Arc&amp;hive</source>
        <translation>归档(&amp;H)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="37"/>
        <location filename="../ui/mainwindow/RunActions.cpp" line="109"/>
        <source>Hide the selected finished runs from the runs table (View &gt; Show archived runs brings them back); nothing is deleted</source>
        <translation>从运行表格中隐藏选中的已结束运行（“视图 &gt; 显示已归档运行”可恢复显示）；不会删除任何内容</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="40"/>
        <source>Unarc&amp;hive</source>
        <translation>取消归档(&amp;H)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="41"/>
        <source>Show the selected archived runs in the runs table again</source>
        <translation>在运行表格中重新显示选中的已归档运行</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="42"/>
        <source>Show &amp;archived runs</source>
        <translation>显示已归档运行(&amp;A)</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="64"/>
        <source>Archived run #%1</source>
        <translation>已归档运行 #%1</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="64"/>
        <source>Archived %1 runs</source>
        <translation>已归档 %1 个运行</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="74"/>
        <source>Unarchived run #%1</source>
        <translation>已取消归档运行 #%1</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="75"/>
        <source>Unarchived %1 runs</source>
        <translation>已取消归档 %1 个运行</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="108"/>
        <source>Only finished runs can be archived: cancel it first, or wait</source>
        <translation>只有已结束的运行才能归档：请先取消，或等待其结束</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="127"/>
        <source>Renamed run #%1 to &apos;%2&apos;</source>
        <translation>已将运行 #%1 重命名为“%2”</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="128"/>
        <source>Saved the tags and notes of run #%1</source>
        <translation>已保存运行 #%1 的标签与备注</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="152"/>
        <source>Cannot change the run</source>
        <translation>无法更改该运行</translation>
    </message>
    <message>
        <location filename="../ui/mainwindow/RunActions.cpp" line="164"/>
        <source>Cannot re-run</source>
        <translation>无法重新运行</translation>
    </message>
</context>
<context>
    <name>ty::RunEditDialog</name>
    <message>
        <location filename="../ui/dialogs/RunEditDialog.cpp" line="21"/>
        <source>Run #%1</source>
        <translation>运行 #%1</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/RunEditDialog.cpp" line="31"/>
        <source>baseline, digits</source>
        <translation>baseline, digits</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/RunEditDialog.cpp" line="34"/>
        <source>What this run tried, what you saw, what to do next…</source>
        <translation>这个运行尝试了什么、你观察到了什么、下一步做什么…</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/RunEditDialog.cpp" line="38"/>
        <source>&amp;Name:</source>
        <translation>名称(&amp;N)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/RunEditDialog.cpp" line="40"/>
        <source>&amp;Tags:</source>
        <translation>标签(&amp;T)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/RunEditDialog.cpp" line="42"/>
        <source>N&amp;otes:</source>
        <translation>备注(&amp;O)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/RunEditDialog.cpp" line="105"/>
        <source>A run needs a name.</source>
        <translation>运行需要一个名称。</translation>
    </message>
</context>
<context>
    <name>ty::RunEndNotifier</name>
    <message>
        <location filename="../ui/notify/RunEndNotifier.cpp" line="42"/>
        <source>%1 #%2 %3</source>
        <translation>%1 #%2 %3</translation>
    </message>
    <message>
        <location filename="../ui/notify/RunEndNotifier.cpp" line="50"/>
        <source>Exit status %1 on %2</source>
        <translation>在 %2 上退出，状态码 %1</translation>
    </message>
    <message>
        <location filename="../ui/notify/RunEndNotifier.cpp" line="51"/>
        <source>On %1</source>
        <translation>在 %1 上</translation>
    </message>
</context>
<context>
    <name>ty::RunsColumnChooser</name>
    <message>
        <location filename="../ui/runs/RunsColumnChooser.cpp" line="67"/>
        <source>No parameters</source>
        <translation>无参数</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsColumnChooser.cpp" line="70"/>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
</context>
<context>
    <name>ty::RunsFilterBar</name>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="52"/>
        <source>Params: lr &lt; 1e-3, optimizer = adam, optimizer ~ regex; metric.loss &lt; 0.5
tag:NAME  state:running|finished|active  node:NAME  queue:Q  user:U  project:P
name~regex; a bare word matches run names; and, or, not, ( )</source>
        <translation>参数：lr &lt; 1e-3, optimizer = adam, optimizer ~ 正则; metric.loss &lt; 0.5
tag:名称  state:running|finished|active  node:名称  queue:Q  user:U  project:P
name~正则；单个词匹配运行名称；and、or、not、( )</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="60"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="61"/>
        <source>param %1</source>
        <translation>参数 %1</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="62"/>
        <source>tag</source>
        <translation>标签</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="63"/>
        <source>state</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="64"/>
        <source>node</source>
        <translation>节点</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="65"/>
        <source>queue</source>
        <translation>队列</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="66"/>
        <source>user</source>
        <translation>用户</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="67"/>
        <source>project</source>
        <translation>项目</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="68"/>
        <source>pipeline, sweep or gang</source>
        <translation>流水线、超参数扫描或组调度</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="86"/>
        <source>Filter runs</source>
        <translation>筛选运行</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="88"/>
        <source>Filter runs, e.g. lr &lt; 1e-3 and tag:baseline</source>
        <translation>过滤运行，例如 lr &lt; 1e-3 and tag:baseline</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="93"/>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="95"/>
        <source>Saved queries</source>
        <translation>已保存的查询</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="98"/>
        <source>Save…</source>
        <translation>保存…</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="99"/>
        <source>Save this query under a name</source>
        <translation>以名称保存此查询</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="102"/>
        <source>Delete</source>
        <translation>删除</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="103"/>
        <source>Delete the selected saved query</source>
        <translation>删除选中的已保存查询</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="105"/>
        <source>Group by:</source>
        <translation>分组依据：</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="218"/>
        <source>%1 of 1 run</source>
        <translation>%1 / 1 个运行</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="218"/>
        <source>%1 of %2 runs</source>
        <translation>%1 / %2 个运行</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="221"/>
        <source>1 group</source>
        <translation>1 个分组</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="221"/>
        <source>%1 groups</source>
        <translation>%1 个分组</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="230"/>
        <source>No saved queries</source>
        <translation>没有已保存的查询</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="230"/>
        <source>Saved queries…</source>
        <translation>已保存的查询…</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="266"/>
        <source>Save query</source>
        <translation>保存查询</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterBar.cpp" line="266"/>
        <source>Name for “%1”:</source>
        <translation>“%1”的名称：</translation>
    </message>
</context>
<context>
    <name>ty::RunsFilterProxy</name>
    <message>
        <location filename="../ui/runs/RunsFilterProxy.cpp" line="228"/>
        <source>1 run</source>
        <translation>1 个运行</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterProxy.cpp" line="228"/>
        <source>%1 runs</source>
        <translation>%1 个运行</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterProxy.cpp" line="230"/>
        <source>%1: %2; click to select the group</source>
        <translation>%1：%2；点击选择该分组</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsFilterProxy.cpp" line="233"/>
        <source>%1 · %2</source>
        <translation>%1 · %2</translation>
    </message>
</context>
<context>
    <name>ty::RunsModel</name>
    <message>
        <location filename="../ui/runs/RunsModel.cpp" line="173"/>
        <source>, exit code %1</source>
        <translation>，退出码 %1</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsModel.cpp" line="175"/>
        <source>, signal %1</source>
        <translation>，信号 %1</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsModel.cpp" line="225"/>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsModel.cpp" line="227"/>
        <source>Its node has not answered since; it may have ended there</source>
        <translation>其节点此后未再应答；该运行可能已在节点上结束</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsModel.cpp" line="252"/>
        <source>State</source>
        <translation>状态</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsModel.cpp" line="253"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsModel.cpp" line="254"/>
        <source>Node</source>
        <translation>节点</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsModel.cpp" line="255"/>
        <source>GPUs</source>
        <translation>GPU</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsModel.cpp" line="256"/>
        <source>Started</source>
        <translation>开始时间</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsModel.cpp" line="257"/>
        <source>Duration</source>
        <translation>时长</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsModel.cpp" line="261"/>
        <source>Parameter %1</source>
        <translation>参数 %1</translation>
    </message>
    <message>
        <location filename="../ui/runs/RunsModel.cpp" line="264"/>
        <source>Latest value of %1</source>
        <translation>%1 的最新值</translation>
    </message>
</context>
<context>
    <name>ty::SettingsDialog</name>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="37"/>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="39"/>
        <source>Appearance</source>
        <translation>外观</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="43"/>
        <source>Theme</source>
        <translation>主题</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="45"/>
        <source>System (dark)</source>
        <translation>跟随系统（深色）</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="45"/>
        <source>System (light)</source>
        <translation>跟随系统（浅色）</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="46"/>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="47"/>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="49"/>
        <source>System follows the desktop&apos;s colours; Light and Dark use Qt&apos;s Fusion style</source>
        <translation>“跟随系统”使用桌面的配色；浅色与深色使用 Qt 的 Fusion 风格</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="50"/>
        <source>&amp;Theme:</source>
        <translation>主题(&amp;T)：</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="52"/>
        <source>Notifications</source>
        <translation>通知</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="54"/>
        <source>&amp;Notify me when a run ends</source>
        <translation>运行结束时通知我(&amp;N)</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="56"/>
        <source>Notify me when a run ends</source>
        <translation>运行结束时通知我</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="57"/>
        <source>A desktop notification when a run succeeds, fails or is cancelled</source>
        <translation>运行成功、失败或被取消时发送桌面通知</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="61"/>
        <source>Scheduling of this database</source>
        <translation>此数据库的调度</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="63"/>
        <source>Kept in %1, shared with trainyardctl policy and the Queue view; per-queue policies and fair-share shares in that file are kept</source>
        <translation>保存在 %1 中，与 trainyardctl policy 及队列视图共用；该文件中各队列的策略与公平份额配额会被保留</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="69"/>
        <source>Queue policy</source>
        <translation>队列策略</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="71"/>
        <source>fcfs: strict submission order · priority: higher first, with aging · sjf: shortest estimated runtime first
backfill: EASY backfill over priority · fair-share: Slurm&apos;s classic fair-share factor, with backfill</source>
        <translation>fcfs：严格按提交顺序 · priority：优先级高者先，随等待时间提升 · sjf：预计运行时间最短者先
backfill：在优先级之上做 EASY 回填 · fair-share：Slurm 经典公平份额因子，含回填</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="74"/>
        <source>&amp;Policy:</source>
        <translation>策略(&amp;P)：</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="77"/>
        <source>Priority aging per hour</source>
        <translation>每小时优先级老化</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="80"/>
        <source> points/hour</source>
        <translation> 点/小时</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="81"/>
        <source>Priority points a waiting run gains per hour (priority and backfill policies)</source>
        <translation>等待中的运行每小时增加的优先级点数（priority 与 backfill 策略）</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="82"/>
        <source>Priority &amp;aging:</source>
        <translation>优先级老化(&amp;A)：</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="85"/>
        <source>Assumed runtime</source>
        <translation>假定运行时间</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="88"/>
        <source> h</source>
        <translation> 小时</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="89"/>
        <source>The runtime assumed for a run with neither an estimate nor a time limit (shortest-job-first order and backfill reservations)</source>
        <translation>既无预估也无时间限制的运行所假定的运行时间（用于最短作业优先排序与回填预留）</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="91"/>
        <source>Assumed &amp;runtime:</source>
        <translation>假定运行时间(&amp;R)：</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="94"/>
        <source>Fair share accounts</source>
        <translation>公平份额账户</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="95"/>
        <source>user</source>
        <translation>用户</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="96"/>
        <source>project</source>
        <translation>项目</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="97"/>
        <source>Fair share &amp;by:</source>
        <translation>公平份额依据(&amp;B)：</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="100"/>
        <source>Usage half-life</source>
        <translation>用量半衰期</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="103"/>
        <source> days</source>
        <translation> 天</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="104"/>
        <source>How fast past GPU usage is forgotten in the fair-share factor</source>
        <translation>公平份额因子中过往 GPU 用量被遗忘的快慢</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="105"/>
        <source>Usage &amp;half-life:</source>
        <translation>用量半衰期(&amp;H)：</translation>
    </message>
    <message>
        <location filename="../ui/settings/SettingsDialog.cpp" line="186"/>
        <source>The scheduling settings were not saved: %1</source>
        <translation>调度设置未保存：%1</translation>
    </message>
</context>
<context>
    <name>ty::SmoothingControl</name>
    <message>
        <location filename="../ui/charts/SmoothingControl.cpp" line="17"/>
        <source>Smoothing</source>
        <translation>平滑</translation>
    </message>
    <message>
        <location filename="../ui/charts/SmoothingControl.cpp" line="20"/>
        <source>TensorBoard&apos;s debiased exponential moving average; raw values drawn faintly behind</source>
        <translation>TensorBoard 的去偏指数滑动平均；原始值以浅色绘制于其后</translation>
    </message>
</context>
<context>
    <name>ty::SubmitDialog</name>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="74"/>
        <source>Submit run</source>
        <translation>提交运行</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="79"/>
        <source>Form or YAML</source>
        <translation>表单或 YAML</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="87"/>
        <source>python3 train.py --lr 0.001</source>
        <translation>python3 train.py --lr 0.001</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="91"/>
        <source>Command kind</source>
        <translation>命令类型</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="92"/>
        <source>Argument list</source>
        <translation>参数列表</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="93"/>
        <source>Shell command</source>
        <translation>Shell 命令</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="94"/>
        <source>Argument list: run exactly these words, quoted like a shell, no expansion.
Shell command: run the line with /bin/sh -c (pipes, $VARS, ;).</source>
        <translation>参数列表：按 shell 方式加引号，原样运行这些词，不做展开。
Shell 命令：用 /bin/sh -c 运行该行（支持管道、$VARS、;）。</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="103"/>
        <source>Browse…</source>
        <translation>浏览…</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="107"/>
        <source>NAME=value, one per line</source>
        <translation>NAME=value，每行一个</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="109"/>
        <source>lr=0.001, one per line; {{lr}} in the command is replaced</source>
        <translation>lr=0.001，每行一个；命令中的 {{lr}} 会被替换</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="118"/>
        <source>baseline, digits</source>
        <translation>baseline, digits</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="126"/>
        <source>&amp;Name:</source>
        <translation>名称(&amp;N)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="127"/>
        <source>&amp;Command:</source>
        <translation>命令(&amp;C)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="128"/>
        <source>&amp;Working directory:</source>
        <translation>工作目录(&amp;W)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="129"/>
        <source>&amp;Environment:</source>
        <translation>环境变量(&amp;E)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="130"/>
        <source>&amp;Params:</source>
        <translation>参数(&amp;P)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="131"/>
        <source>&amp;GPUs:</source>
        <translation>GPU(&amp;G)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="132"/>
        <source>P&amp;riority:</source>
        <translation>优先级(&amp;R)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="133"/>
        <source>&amp;Tags:</source>
        <translation>标签(&amp;T)：</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="134"/>
        <source>Form</source>
        <translation>表单</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="138"/>
        <source>Job spec YAML</source>
        <translation>作业规格 YAML</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="142"/>
        <source>YAML spec</source>
        <translation>YAML 任务规格</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="159"/>
        <source>&amp;Submit</source>
        <translation>提交(&amp;S)</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="272"/>
        <source>Command: enter the command to run, e.g. python3 train.py</source>
        <translation>命令：请输入要运行的命令，例如 python3 train.py</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="279"/>
        <source>Command: %1</source>
        <translation>命令：%1</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="284"/>
        <source>Environment</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="288"/>
        <source>Params</source>
        <translation>参数</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="315"/>
        <source># A Trainyard job spec (README, &quot;Job spec&quot;, has every key). Lines starting with # are comments.
name: my-run
command: [python3, train.py, --lr, &quot;{{lr}}&quot;]   # a list runs as is; a string runs through /bin/sh -c
workdir: .                # relative to the spec file (here: your home folder)
params: {lr: 0.001}       # {{lr}} above; also exported as TRAINYARD_PARAM_LR
# env: {PYTHONUNBUFFERED: &quot;1&quot;}
# resources: {gpus: 1, gpu_memory: 40GiB, cpus: 8, memory: 64G}
# tags: [baseline]
# sweep: {lr: [0.001, 0.01, 0.1]}   # one run per value
# time_limit: 4h
# metric_files: [lightning_logs/*/metrics.csv]
</source>
        <translation># Trainyard 任务规格（README 的 “Job spec” 一节列出所有键）。以 # 开头的行是注释。
name: my-run
command: [python3, train.py, --lr, &quot;{{lr}}&quot;]   # 列表原样运行；字符串通过 /bin/sh -c 运行
workdir: .                # 相对于任务规格文件（此处：你的主目录）
params: {lr: 0.001}       # 即上面的 {{lr}}；同时导出为 TRAINYARD_PARAM_LR
# env: {PYTHONUNBUFFERED: &quot;1&quot;}
# resources: {gpus: 1, gpu_memory: 40GiB, cpus: 8, memory: 64G}
# tags: [baseline]
# sweep: {lr: [0.001, 0.01, 0.1]}   # 扫参：每个取值一个运行
# time_limit: 4h
# metric_files: [lightning_logs/*/metrics.csv]
</translation>
    </message>
    <message>
        <location filename="../ui/dialogs/SubmitDialog.cpp" line="379"/>
        <source>Working directory</source>
        <translation>工作目录</translation>
    </message>
</context>
<context>
    <name>ty::XAxis</name>
    <message>
        <location filename="../ui/charts/XAxisMap.cpp" line="15"/>
        <source>step</source>
        <translation>步</translation>
    </message>
    <message>
        <location filename="../ui/charts/XAxisMap.cpp" line="16"/>
        <source>epoch</source>
        <translation>轮次</translation>
    </message>
    <message>
        <location filename="../ui/charts/XAxisMap.cpp" line="17"/>
        <source>seconds since start</source>
        <translation>自开始以来的秒数</translation>
    </message>
    <message>
        <location filename="../ui/charts/XAxisMap.cpp" line="18"/>
        <source>wall time (local)</source>
        <translation>墙钟时间（本地）</translation>
    </message>
</context>
</TS>
