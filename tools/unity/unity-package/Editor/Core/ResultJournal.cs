// Keeps each request's response by id, on disk when a folder is given, so a response lost in a
// domain reload (or a dropped connection) can be fetched again instead of running the command twice.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text.RegularExpressions;
using System.Threading.Tasks;

namespace AgentSdk.Unity.Bridge
{
    /// <summary>What the journal knows about one request id.</summary>
    public enum JournalState { Unknown, Pending, Done }

    /// <summary>Responses by request id: pending ones in memory, finished ones also on disk.</summary>
    public sealed class ResultJournal
    {
        private static readonly Regex IdPattern = new Regex("^[A-Za-z0-9_.-]{1,128}$");

        private readonly object _lock = new object();
        private readonly string _directory;
        private readonly int _capacity;
        private readonly Dictionary<string, TaskCompletionSource<string>> _pending = new Dictionary<string, TaskCompletionSource<string>>();
        private readonly Dictionary<string, string> _done = new Dictionary<string, string>();
        private readonly Queue<string> _order = new Queue<string>();

        /// <param name="directory">Folder for finished responses (null keeps them in memory only).</param>
        /// <param name="capacity">How many finished responses to keep.</param>
        public ResultJournal(string directory, int capacity = 256)
        {
            _directory = directory;
            _capacity = Math.Max(1, capacity);
            if (_directory != null) LoadFromDisk();
        }

        /// <summary>Ids become file names, so only a safe alphabet is accepted.</summary>
        public static bool IsValidId(string id) => id != null && IdPattern.IsMatch(id);

        public JournalState StateOf(string id)
        {
            lock (_lock)
            {
                if (_done.ContainsKey(id)) return JournalState.Done;
                if (_pending.ContainsKey(id)) return JournalState.Pending;
                return JournalState.Unknown;
            }
        }

        /// <summary>The finished response JSON, or null.</summary>
        public string GetResponse(string id)
        {
            lock (_lock)
            {
                string json;
                return _done.TryGetValue(id, out json) ? json : null;
            }
        }

        /// <summary>
        /// Claims an id. Returns null when the caller should run the command; otherwise a task that
        /// completes with the response of the run already finished or in flight under that id.
        /// </summary>
        public Task<string> Begin(string id)
        {
            lock (_lock)
            {
                string json;
                if (_done.TryGetValue(id, out json)) return Task.FromResult(json);
                TaskCompletionSource<string> running;
                if (_pending.TryGetValue(id, out running)) return running.Task;
                _pending[id] = new TaskCompletionSource<string>(TaskCreationOptions.RunContinuationsAsynchronously);
                return null;
            }
        }

        /// <summary>Stores the response of a claimed id and wakes anyone waiting on it.</summary>
        public void Complete(string id, string responseJson)
        {
            TaskCompletionSource<string> waiter;
            var evicted = new List<string>();
            lock (_lock)
            {
                _pending.TryGetValue(id, out waiter);
                _pending.Remove(id);
                if (!_done.ContainsKey(id)) _order.Enqueue(id);
                _done[id] = responseJson;
                while (_order.Count > _capacity)
                {
                    string old = _order.Dequeue();
                    _done.Remove(old);
                    evicted.Add(old);
                }
            }
            // Waiters first: a disk problem below must not keep anyone from the answer held in memory.
            if (waiter != null) waiter.TrySetResult(responseJson);
            foreach (string old in evicted) DeleteFile(old);
            WriteFile(id, responseJson);
        }

        /// <summary>Releases a claimed id without storing it (retryable failures must run again when retried).</summary>
        public void Abandon(string id, string responseJson)
        {
            TaskCompletionSource<string> waiter;
            lock (_lock)
            {
                _pending.TryGetValue(id, out waiter);
                _pending.Remove(id);
            }
            if (waiter != null) waiter.TrySetResult(responseJson);
        }

        /// <summary>Raised when a finished response could not be written to disk (it is still answered from memory).</summary>
        public event Action<string, Exception> WriteFailed;

        private string PathFor(string id) => Path.Combine(_directory, id + ".json");

        private void WriteFile(string id, string json)
        {
            if (_directory == null) return;
            try
            {
                Directory.CreateDirectory(_directory);
                AtomicFile.WriteAllText(PathFor(id), json);
            }
            catch (Exception e)
            {
                // The in-memory copy still answers until the next reload; say why the disk copy is missing.
                WriteFailed?.Invoke(id, e);
            }
        }

        private void DeleteFile(string id)
        {
            if (_directory == null) return;
            try { File.Delete(PathFor(id)); } catch (IOException) { } catch (UnauthorizedAccessException) { }
        }

        private void LoadFromDisk()
        {
            if (!Directory.Exists(_directory)) return;
            // Half-written files of a write a crash or reload cut off: never a result, only clutter.
            foreach (FileInfo stale in new DirectoryInfo(_directory).GetFiles("*.tmp"))
            {
                try { stale.Delete(); } catch (IOException) { } catch (UnauthorizedAccessException) { }
            }
            var files = new DirectoryInfo(_directory).GetFiles("*.json").OrderBy(f => f.LastWriteTimeUtc).ToList();
            foreach (FileInfo file in files)
            {
                string id = Path.GetFileNameWithoutExtension(file.Name);
                if (!IsValidId(id)) continue;
                try
                {
                    _done[id] = File.ReadAllText(file.FullName, BridgeProtocol.Utf8);
                    _order.Enqueue(id);
                }
                catch (IOException) { }
            }
            while (_order.Count > _capacity)
            {
                string old = _order.Dequeue();
                _done.Remove(old);
                DeleteFile(old);
            }
        }
    }

    /// <summary>Write-then-rename so a reader never sees half a file, nor a moment without one.</summary>
    public static class AtomicFile
    {
        public static void WriteAllText(string path, string text)
        {
            string temp = path + "." + Guid.NewGuid().ToString("N") + ".tmp";
            try
            {
                File.WriteAllText(temp, text, BridgeProtocol.Utf8);
                if (File.Exists(path)) File.Replace(temp, path, null);
                else File.Move(temp, path);
            }
            catch
            {
                // The write failed half way: leave the old file (if any) and no temporary behind.
                try { File.Delete(temp); } catch (IOException) { } catch (UnauthorizedAccessException) { }
                throw;
            }
        }
    }
}
