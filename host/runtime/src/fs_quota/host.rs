//! The wrapped `wasi:filesystem` host functions: each delegates to wasmtime-wasi's, and those
//! that can grow or shrink a quota'd folder account for it around the call.

use std::sync::Arc;

use wasmtime::component::Resource;
use wasmtime_wasi::filesystem::Descriptor;
use wasmtime_wasi::p2::bindings::filesystem::types::{
    DescriptorStat, DescriptorType, ErrorCode, HostDescriptor, HostDirectoryEntryStream,
};
use wasmtime_wasi::p2::bindings::filesystem::{preopens, types};
use wasmtime_wasi::p2::{DynOutputStream, FsError, FsResult};

use super::{DiskQuota, QuotaStream, QuotaView};

/// A borrow of `fd` for a call made on the guest's behalf before its own.
fn again(fd: &Resource<Descriptor>) -> Resource<Descriptor> {
    Resource::new_borrow(fd.rep())
}

impl QuotaView<'_> {
    /// Index of the mount `fd` lies under, if known.
    fn mount(&self, fd: &Resource<Descriptor>) -> Option<usize> {
        self.quotas.owner.get(&fd.rep()).copied()
    }

    /// The quota of the mount `fd` lies under, if it has one.
    fn quota(&self, fd: &Resource<Descriptor>) -> Option<Arc<DiskQuota>> {
        self.mount(fd)
            .and_then(|i| self.quotas.mounts.get(i))
            .and_then(|m| m.quota.clone())
    }

    /// The current size of the file `fd` is open on; `None` when it is not a file (the
    /// delegated call then reports that).
    fn file_size(&self, fd: &Resource<Descriptor>) -> Result<Option<u64>, FsError> {
        match self.fs.table.get(fd)? {
            Descriptor::File(f) => Ok(Some(f.file.metadata()?.len())),
            Descriptor::Dir(_) => Ok(None),
        }
    }

    /// What is at `path` under `dir` now, if anything (never following a final symlink unless
    /// asked), through wasmtime-wasi's own confined `stat-at`.
    async fn entry(
        &mut self,
        dir: &Resource<Descriptor>,
        follow: bool,
        path: &str,
    ) -> Option<DescriptorStat> {
        let flags = if follow {
            types::PathFlags::SYMLINK_FOLLOW
        } else {
            types::PathFlags::empty()
        };
        HostDescriptor::stat_at(&mut self.fs, again(dir), flags, path.to_owned())
            .await
            .ok()
    }

    /// Refuses a rename or link between two different mounts when either has a quota.
    fn same_mount(
        &self,
        a: &Resource<Descriptor>,
        b: &Resource<Descriptor>,
    ) -> Result<Option<Arc<DiskQuota>>, FsError> {
        let (qa, qb) = (self.quota(a), self.quota(b));
        if (qa.is_some() || qb.is_some()) && self.mount(a) != self.mount(b) {
            return Err(ErrorCode::CrossDevice.into());
        }
        Ok(qa)
    }

    /// Replaces wasmtime-wasi's output stream with one that accounts each write.
    fn wrap_stream(
        &mut self,
        stream: Resource<DynOutputStream>,
        quota: Arc<DiskQuota>,
        file: Arc<std::fs::File>,
        position: Option<u64>,
    ) -> FsResult<Resource<DynOutputStream>> {
        let inner: DynOutputStream = self.fs.table.delete(stream)?;
        let wrapped: DynOutputStream = Box::new(QuotaStream {
            inner,
            file,
            position,
            quota,
        });
        Ok(self.fs.table.push(wrapped)?)
    }

    /// The quota and open file behind `fd`, when it is a file under a quota'd mount.
    fn quota_file(
        &self,
        fd: &Resource<Descriptor>,
    ) -> Option<(Arc<DiskQuota>, Arc<std::fs::File>)> {
        let quota = self.quota(fd)?;
        match self.fs.table.get(fd) {
            Ok(Descriptor::File(f)) => Some((quota, f.file.clone())),
            _ => None,
        }
    }
}

/// Bytes a stat'ed entry holds against a quota.
fn bytes_of(stat: &DescriptorStat) -> u64 {
    if stat.type_ == DescriptorType::RegularFile {
        stat.size
    } else {
        0
    }
}

impl preopens::Host for QuotaView<'_> {
    fn get_directories(&mut self) -> wasmtime::Result<Vec<(Resource<Descriptor>, String)>> {
        // The held handles, never a fresh open by path (see `QuotaMount`); wasmtime-wasi's own
        // preopen list stays empty.
        let mut dirs = Vec::with_capacity(self.quotas.mounts.len());
        for (i, mount) in self.quotas.mounts.iter().enumerate() {
            let fd = self.fs.table.push(Descriptor::Dir(mount.dir.clone()))?;
            self.quotas.owner.insert(fd.rep(), i);
            dirs.push((fd, mount.guest.clone()));
        }
        Ok(dirs)
    }
}

impl types::Host for QuotaView<'_> {
    fn convert_error_code(&mut self, err: FsError) -> wasmtime::Result<ErrorCode> {
        types::Host::convert_error_code(&mut self.fs, err)
    }

    fn filesystem_error_code(
        &mut self,
        err: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        types::Host::filesystem_error_code(&mut self.fs, err)
    }
}

impl HostDirectoryEntryStream for QuotaView<'_> {
    async fn read_directory_entry(
        &mut self,
        stream: Resource<types::DirectoryEntryStream>,
    ) -> FsResult<Option<types::DirectoryEntry>> {
        HostDirectoryEntryStream::read_directory_entry(&mut self.fs, stream).await
    }

    fn drop(&mut self, stream: Resource<types::DirectoryEntryStream>) -> wasmtime::Result<()> {
        HostDirectoryEntryStream::drop(&mut self.fs, stream)
    }
}

impl HostDescriptor for QuotaView<'_> {
    async fn write(
        &mut self,
        fd: Resource<Descriptor>,
        buf: Vec<u8>,
        offset: types::Filesize,
    ) -> FsResult<types::Filesize> {
        let (Some(quota), Some(size)) = (self.quota(&fd), self.file_size(&fd)?) else {
            return HostDescriptor::write(&mut self.fs, fd, buf, offset).await;
        };
        let growth = offset.saturating_add(buf.len() as u64).saturating_sub(size);
        quota.reserve_bytes(growth)?;
        let written = HostDescriptor::write(&mut self.fs, fd, buf, offset).await;
        let used = match &written {
            Ok(n) => offset.saturating_add(*n).saturating_sub(size).min(growth),
            Err(_) => 0,
        };
        quota.release_bytes(growth - used);
        written
    }

    async fn set_size(&mut self, fd: Resource<Descriptor>, size: types::Filesize) -> FsResult<()> {
        let (Some(quota), Some(before)) = (self.quota(&fd), self.file_size(&fd)?) else {
            return HostDescriptor::set_size(&mut self.fs, fd, size).await;
        };
        let growth = size.saturating_sub(before);
        quota.reserve_bytes(growth)?;
        let result = HostDescriptor::set_size(&mut self.fs, fd, size).await;
        match &result {
            Ok(()) => quota.release_bytes(before.saturating_sub(size)),
            Err(_) => quota.release_bytes(growth),
        }
        result
    }

    fn write_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<DynOutputStream>> {
        let accounted = self.quota_file(&fd);
        let stream = HostDescriptor::write_via_stream(&mut self.fs, fd, offset)?;
        match accounted {
            Some((quota, file)) => self.wrap_stream(stream, quota, file, Some(offset)),
            None => Ok(stream),
        }
    }

    fn append_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<DynOutputStream>> {
        let accounted = self.quota_file(&fd);
        let stream = HostDescriptor::append_via_stream(&mut self.fs, fd)?;
        match accounted {
            Some((quota, file)) => self.wrap_stream(stream, quota, file, None),
            None => Ok(stream),
        }
    }

    async fn open_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        oflags: types::OpenFlags,
        flags: types::DescriptorFlags,
    ) -> FsResult<Resource<Descriptor>> {
        let mount = self.mount(&fd);
        let quota = self.quota(&fd);
        let (mut created, mut truncated) = (false, 0);
        if let Some(quota) = &quota
            && oflags.intersects(types::OpenFlags::CREATE | types::OpenFlags::TRUNCATE)
        {
            let follow = path_flags.contains(types::PathFlags::SYMLINK_FOLLOW);
            match self.entry(&fd, follow, &path).await {
                None if oflags.contains(types::OpenFlags::CREATE) => {
                    quota.reserve_files(1)?;
                    created = true;
                }
                Some(stat) if oflags.contains(types::OpenFlags::TRUNCATE) => {
                    truncated = bytes_of(&stat);
                }
                _ => {}
            }
        }
        let opened =
            HostDescriptor::open_at(&mut self.fs, fd, path_flags, path, oflags, flags).await;
        match (&opened, &quota) {
            (Ok(new), _) => {
                if let Some(i) = mount {
                    self.quotas.owner.insert(new.rep(), i);
                }
                if let Some(quota) = &quota {
                    quota.release_bytes(truncated);
                }
            }
            (Err(_), Some(quota)) if created => quota.release_files(1),
            (Err(_), _) => {}
        }
        opened
    }

    async fn create_directory_at(
        &mut self,
        fd: Resource<Descriptor>,
        path: String,
    ) -> FsResult<()> {
        let quota = self.quota(&fd);
        if let Some(quota) = &quota {
            quota.reserve_files(1)?;
        }
        let result = HostDescriptor::create_directory_at(&mut self.fs, fd, path).await;
        if let (Err(_), Some(quota)) = (&result, &quota) {
            quota.release_files(1);
        }
        result
    }

    async fn symlink_at(
        &mut self,
        fd: Resource<Descriptor>,
        src_path: String,
        dest_path: String,
    ) -> FsResult<()> {
        let quota = self.quota(&fd);
        if let Some(quota) = &quota {
            quota.reserve_files(1)?;
        }
        let result = HostDescriptor::symlink_at(&mut self.fs, fd, src_path, dest_path).await;
        if let (Err(_), Some(quota)) = (&result, &quota) {
            quota.release_files(1);
        }
        result
    }

    async fn link_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path_flags: types::PathFlags,
        old_path: String,
        new_descriptor: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let Some(quota) = self.same_mount(&fd, &new_descriptor)? else {
            return HostDescriptor::link_at(
                &mut self.fs,
                fd,
                old_path_flags,
                old_path,
                new_descriptor,
                new_path,
            )
            .await;
        };
        // A second name keeps the file alive after the first is removed, which gives its
        // bytes back: so the link counts the file again.
        let follow = old_path_flags.contains(types::PathFlags::SYMLINK_FOLLOW);
        let size = self
            .entry(&fd, follow, &old_path)
            .await
            .map_or(0, |s| bytes_of(&s));
        quota.reserve_files(1)?;
        if let Err(e) = quota.reserve_bytes(size) {
            quota.release_files(1);
            return Err(e);
        }
        let result = HostDescriptor::link_at(
            &mut self.fs,
            fd,
            old_path_flags,
            old_path,
            new_descriptor,
            new_path,
        )
        .await;
        if result.is_err() {
            quota.release_files(1);
            quota.release_bytes(size);
        }
        result
    }

    async fn unlink_file_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<()> {
        let Some(quota) = self.quota(&fd) else {
            return HostDescriptor::unlink_file_at(&mut self.fs, fd, path).await;
        };
        let before = self.entry(&fd, false, &path).await;
        let result = HostDescriptor::unlink_file_at(&mut self.fs, fd, path).await;
        if result.is_ok() {
            quota.release_files(1);
            quota.release_bytes(before.map_or(0, |s| bytes_of(&s)));
        }
        result
    }

    async fn remove_directory_at(
        &mut self,
        fd: Resource<Descriptor>,
        path: String,
    ) -> FsResult<()> {
        let quota = self.quota(&fd);
        let result = HostDescriptor::remove_directory_at(&mut self.fs, fd, path).await;
        if let (Ok(()), Some(quota)) = (&result, &quota) {
            quota.release_files(1);
        }
        result
    }

    async fn rename_at(
        &mut self,
        fd: Resource<Descriptor>,
        old_path: String,
        new_fd: Resource<Descriptor>,
        new_path: String,
    ) -> FsResult<()> {
        let Some(quota) = self.same_mount(&fd, &new_fd)? else {
            return HostDescriptor::rename_at(&mut self.fs, fd, old_path, new_fd, new_path).await;
        };
        // A rename over an existing entry removes that entry, unless both names are the same
        // file (then POSIX leaves both in place).
        let mut replaced = self.entry(&new_fd, false, &new_path).await;
        if replaced.is_some() {
            let none = types::PathFlags::empty();
            let old =
                HostDescriptor::metadata_hash_at(&mut self.fs, again(&fd), none, old_path.clone())
                    .await
                    .ok()
                    .map(|h| (h.lower, h.upper));
            let new = HostDescriptor::metadata_hash_at(
                &mut self.fs,
                again(&new_fd),
                none,
                new_path.clone(),
            )
            .await
            .ok()
            .map(|h| (h.lower, h.upper));
            if old.is_some() && old == new {
                replaced = None;
            }
        }
        let result = HostDescriptor::rename_at(&mut self.fs, fd, old_path, new_fd, new_path).await;
        if let (Ok(()), Some(stat)) = (&result, replaced) {
            quota.release_files(1);
            quota.release_bytes(bytes_of(&stat));
        }
        result
    }

    fn drop(&mut self, fd: Resource<Descriptor>) -> wasmtime::Result<()> {
        self.quotas.owner.remove(&fd.rep());
        HostDescriptor::drop(&mut self.fs, fd)
    }

    // Everything below changes no usage: plain delegation.

    async fn advise(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
        len: types::Filesize,
        advice: types::Advice,
    ) -> FsResult<()> {
        HostDescriptor::advise(&mut self.fs, fd, offset, len, advice).await
    }

    async fn sync_data(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        HostDescriptor::sync_data(&mut self.fs, fd).await
    }

    async fn get_flags(&mut self, fd: Resource<Descriptor>) -> FsResult<types::DescriptorFlags> {
        HostDescriptor::get_flags(&mut self.fs, fd).await
    }

    async fn get_type(&mut self, fd: Resource<Descriptor>) -> FsResult<DescriptorType> {
        HostDescriptor::get_type(&mut self.fs, fd).await
    }

    async fn set_times(
        &mut self,
        fd: Resource<Descriptor>,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        HostDescriptor::set_times(&mut self.fs, fd, atim, mtim).await
    }

    async fn read(
        &mut self,
        fd: Resource<Descriptor>,
        len: types::Filesize,
        offset: types::Filesize,
    ) -> FsResult<(Vec<u8>, bool)> {
        HostDescriptor::read(&mut self.fs, fd, len, offset).await
    }

    async fn read_directory(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<Resource<types::DirectoryEntryStream>> {
        HostDescriptor::read_directory(&mut self.fs, fd).await
    }

    async fn sync(&mut self, fd: Resource<Descriptor>) -> FsResult<()> {
        HostDescriptor::sync(&mut self.fs, fd).await
    }

    async fn stat(&mut self, fd: Resource<Descriptor>) -> FsResult<DescriptorStat> {
        HostDescriptor::stat(&mut self.fs, fd).await
    }

    async fn stat_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<DescriptorStat> {
        HostDescriptor::stat_at(&mut self.fs, fd, path_flags, path).await
    }

    async fn set_times_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
        atim: types::NewTimestamp,
        mtim: types::NewTimestamp,
    ) -> FsResult<()> {
        HostDescriptor::set_times_at(&mut self.fs, fd, path_flags, path, atim, mtim).await
    }

    async fn readlink_at(&mut self, fd: Resource<Descriptor>, path: String) -> FsResult<String> {
        HostDescriptor::readlink_at(&mut self.fs, fd, path).await
    }

    fn read_via_stream(
        &mut self,
        fd: Resource<Descriptor>,
        offset: types::Filesize,
    ) -> FsResult<Resource<wasmtime_wasi::p2::DynInputStream>> {
        HostDescriptor::read_via_stream(&mut self.fs, fd, offset)
    }

    async fn is_same_object(
        &mut self,
        a: Resource<Descriptor>,
        b: Resource<Descriptor>,
    ) -> wasmtime::Result<bool> {
        HostDescriptor::is_same_object(&mut self.fs, a, b).await
    }

    async fn metadata_hash(
        &mut self,
        fd: Resource<Descriptor>,
    ) -> FsResult<types::MetadataHashValue> {
        HostDescriptor::metadata_hash(&mut self.fs, fd).await
    }

    async fn metadata_hash_at(
        &mut self,
        fd: Resource<Descriptor>,
        path_flags: types::PathFlags,
        path: String,
    ) -> FsResult<types::MetadataHashValue> {
        HostDescriptor::metadata_hash_at(&mut self.fs, fd, path_flags, path).await
    }
}
