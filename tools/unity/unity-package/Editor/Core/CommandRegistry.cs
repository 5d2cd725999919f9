// Commands the bridge can run, and the seam through which engine-specific handlers plug in.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Threading;
using System.Threading.Tasks;

namespace AgentSdk.Unity.Bridge
{
    /// <summary>Runs one command. Return a JSON-able value, or throw BridgeException for a typed error.</summary>
    public delegate Task<object> CommandHandler(CommandArgs args, CancellationToken token);

    /// <summary>A group of commands (the Unity editor handlers, or a test host's handlers).</summary>
    public interface IBridgeCommandSet
    {
        void Register(CommandRegistry registry);
    }

    /// <summary>Runs work on the thread that owns the engine (Unity's main thread); the bridge itself never touches engine objects.</summary>
    public interface IMainThreadDispatcher
    {
        Task<T> Run<T>(Func<T> work);
    }

    /// <summary>Runs work on the calling thread pool: for hosts with no main-thread rule.</summary>
    public sealed class ThreadPoolDispatcher : IMainThreadDispatcher
    {
        public Task<T> Run<T>(Func<T> work) => Task.Run(work);
    }

    /// <summary>One registered command.</summary>
    public sealed class CommandInfo
    {
        public string Name { get; }
        public CommandHandler Handler { get; }

        /// <summary>When true the bridge answers editor_busy (retryable) while the editor compiles or reloads.</summary>
        public bool RequiresIdleEditor { get; }

        public CommandInfo(string name, CommandHandler handler, bool requiresIdleEditor)
        {
            Name = name;
            Handler = handler;
            RequiresIdleEditor = requiresIdleEditor;
        }
    }

    /// <summary>Name → handler table; its names are announced as capabilities in the handshake.</summary>
    public sealed class CommandRegistry
    {
        private readonly Dictionary<string, CommandInfo> _commands = new Dictionary<string, CommandInfo>(StringComparer.Ordinal);
        private readonly object _lock = new object();

        public void Add(string name, CommandHandler handler, bool requiresIdleEditor = true)
        {
            if (string.IsNullOrEmpty(name)) throw new ArgumentException("Command name is empty", nameof(name));
            if (name.StartsWith("bridge.", StringComparison.Ordinal)) throw new ArgumentException("'bridge.' commands are built in", nameof(name));
            lock (_lock) _commands[name] = new CommandInfo(name, handler, requiresIdleEditor);
        }

        /// <summary>Adds a command whose body is synchronous.</summary>
        public void AddSync(string name, Func<CommandArgs, object> handler, bool requiresIdleEditor = true)
        {
            Add(name, (args, token) => Task.FromResult(handler(args)), requiresIdleEditor);
        }

        public void AddSet(IBridgeCommandSet set) => set.Register(this);

        public bool TryGet(string name, out CommandInfo info)
        {
            lock (_lock) return _commands.TryGetValue(name, out info);
        }

        public IList<string> Names
        {
            get { lock (_lock) return _commands.Keys.OrderBy(n => n, StringComparer.Ordinal).ToList(); }
        }
    }
}
