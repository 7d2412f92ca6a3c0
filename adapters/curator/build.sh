#!/bin/sh
# Builds adapter.jar at image build time (Dockerfile); its manifest names Debian's jars for run time.
set -e
cd "$(dirname "$0")"
CP=$(ls /usr/share/java/curator-recipes.jar /usr/share/java/curator-framework.jar /usr/share/java/curator-client.jar \
  /usr/share/java/zookeeper.jar /usr/share/java/zookeeper-jute.jar /usr/share/java/guava.jar /usr/share/java/slf4j-api.jar \
  /usr/share/java/jackson-databind.jar /usr/share/java/jackson-core.jar /usr/share/java/jackson-annotations.jar | tr '\n' ':')
mkdir -p classes
javac -Xlint:all,-path -d classes -cp "$CP" CuratorAdapter.java
jar --create --file adapter.jar --manifest MANIFEST.MF -C classes .
rm -rf classes
